// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// Calls a precompile (Osaka's P-256 verifier at 0x100, modexp at 0x05) and logs what it answered and
/// the gas the call took, so a node's precompile pricing shows in the receipt's log.
contract PrecompileProbe {
    event Probed(address indexed target, bool ok, uint256 gasSpent, bytes out);

    function probe(address target, bytes calldata input) external returns (bool ok, bytes memory out) {
        uint256 before = gasleft();
        (ok, out) = target.staticcall(input);
        emit Probed(target, ok, before - gasleft(), out);
    }
}
