// Move two non-precompiles to same adddress
>> {"jsonrpc":"2.0","id":1,"method":"eth_simulateV1","params":[{"blockStateCalls":[{"stateOverrides":{"0x0100000000000000000000000000000000000000":{"movePrecompileToAddress":"0xc200000000000000000000000000000000000000"},"0x0200000000000000000000000000000000000000":{"movePrecompileToAddress":"0xc200000000000000000000000000000000000000"}}}]},"latest"]}
<< {"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"account 0x0100000000000000000000000000000000000000 is not a precompile"}}
