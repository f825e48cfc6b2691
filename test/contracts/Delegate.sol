// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// Code an EOA delegates to (EIP-7702): it runs in the EOA's context (its storage, its address).
contract Delegate {
    event Pinged(address indexed self, address indexed caller, uint256 value, uint256 total);

    uint256 public count;

    function ping(uint256 v) external payable {
        count += v;
        emit Pinged(address(this), msg.sender, v, count);
    }

    /// EXTCODESIZE / EXTCODEHASH / EXTCODECOPY of `a` (a delegated EOA shows its 23-byte designator)
    function codeOf(address a) external view returns (uint256 size, bytes32 hash, bytes memory code) {
        size = a.code.length;
        hash = a.codehash;
        code = a.code;
    }

    /// a call through another (possibly delegated) account
    function forward(address target, uint256 v) external {
        Delegate(target).ping(v);
    }
}
