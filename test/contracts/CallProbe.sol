// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// What a call can see of the tx around it (test/e2e/ethcall-lean.test.ts): gas left, prices, sender,
/// balances, block fields, and what an access costs (cold or warm: EIP-2929/2930/3651).
contract CallProbe {
    uint256 private stored = 7;

    function cost(address a) private view returns (uint256) {
        uint256 g = gasleft();
        uint256 b = a.balance;
        return g - gasleft() + (b & 0);
    }

    function probe(address other) external payable returns (uint256[] memory out) {
        uint256 start = gasleft();
        out = new uint256[](22);
        out[0] = start;
        out[1] = tx.gasprice;
        out[2] = uint256(uint160(tx.origin));
        out[3] = uint256(uint160(msg.sender));
        out[4] = msg.value;
        out[5] = address(this).balance;
        out[6] = tx.origin.balance;
        out[7] = uint256(uint160(address(block.coinbase)));
        out[8] = block.number;
        out[9] = block.timestamp;
        out[10] = block.basefee;
        out[11] = block.chainid;
        out[12] = block.prevrandao;
        out[13] = block.gaslimit;
        out[14] = cost(other);
        out[15] = cost(other);
        out[16] = cost(block.coinbase);
        out[17] = cost(address(1));
        out[18] = cost(tx.origin);
        uint256 g = gasleft();
        uint256 s = stored;
        out[19] = g - gasleft() + (s & 0);
        out[20] = uint256(blockhash(block.number - 1));
        out[21] = gasleft();
    }

    function inner(uint256 x) external payable returns (uint256, uint256, uint256) {
        return (x * 3, msg.value, gasleft());
    }

    /// calls that make frames: precompiles, a value transfer to an account without code, a nested call
    function frames(address other) external payable returns (bytes32 h, bytes memory echoed, bool sent, uint256[3] memory got, uint256 left) {
        h = sha256(abi.encode(other, msg.value));
        (, echoed) = address(4).staticcall("frames");
        (sent, ) = payable(other).call{value: 1}("");
        (got[0], got[1], got[2]) = this.inner{value: 2}(7);
        left = gasleft();
    }

    function fail(uint256 code) external pure {
        if (code == 1) revert("probe says no");
        if (code == 2) assert(false);
        uint256[] memory big = new uint256[](code);
        big[0] = 1;
    }
}
