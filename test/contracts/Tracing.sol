// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// Contracts for the debug_trace* tests: nested calls with a reverted inner call, CREATE and
/// CREATE2, a revert with a reason, precompile calls, a self-destruct, storage and logs, and a
/// gas burner for the trace benchmark.

contract Callee {
    uint256 public hits;
    event Hit(address indexed from, uint256 n);

    function ok(uint256 x) external returns (uint256) {
        hits += 1;
        emit Hit(msg.sender, x);
        return x * 2;
    }

    function fail(uint256 x) external pure returns (uint256) {
        require(x == 0, "callee says no");
        return x;
    }
}

contract Caller {
    Callee public immutable callee;
    uint256 public last;
    event Done(uint256 result, bool innerFailed);

    constructor(Callee c) {
        callee = c;
    }

    /// ok() succeeds, fail() reverts with a reason and is caught: the outer call succeeds.
    function chain(uint256 x) external returns (uint256) {
        uint256 r = callee.ok(x);
        bool innerFailed;
        try callee.fail(x) returns (uint256) {} catch {
            innerFailed = true;
        }
        last = r;
        emit Done(r, innerFailed);
        return r;
    }

    function mustFail(uint256 x) external pure {
        require(x > 100, "x too small");
    }

    /// sha256 (0x02), identity (0x04) and ecrecover (0x01)
    function precompiles(bytes calldata data) external view returns (bytes32 h, bytes memory echo, address who) {
        h = sha256(data);
        (bool ok, bytes memory out) = address(4).staticcall(data);
        require(ok, "identity failed");
        echo = out;
        who = ecrecover(bytes32(uint256(1)), 27, bytes32(uint256(2)), bytes32(uint256(3)));
    }
}

contract Child {
    uint256 public value;
    address public owner;

    constructor(uint256 v) payable {
        value = v;
        owner = msg.sender;
    }

    function destroy(address payable to) external {
        selfdestruct(to);
    }
}

contract Factory {
    event Made(address child);

    function make(uint256 v) external payable returns (address c) {
        c = address(new Child{value: msg.value}(v));
        emit Made(c);
    }

    function make2(bytes32 salt, uint256 v) external returns (address c) {
        c = address(new Child{salt: salt}(v));
        emit Made(c);
    }

    /// created and destroyed in one transaction (EIP-6780: really deleted)
    function makeAndDestroy(uint256 v) external payable returns (address c) {
        Child child = new Child{value: msg.value}(v);
        child.destroy(payable(msg.sender));
        c = address(child);
    }
}

contract Burner {
    uint256 public acc;

    /// about `rounds` * 100 gas of arithmetic, memory and transient/storage work
    function burn(uint256 rounds) external returns (uint256 x) {
        x = acc;
        for (uint256 i = 0; i < rounds; i++) {
            x = uint256(keccak256(abi.encode(x, i))) % 1000003;
        }
        acc = x;
    }
}
