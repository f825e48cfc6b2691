// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// Made and destroyed by BlockSink (test/unit/revm-block.test.ts): a constructor that may refuse, and
/// a SELFDESTRUCT in or after the creating tx.
contract Child {
    constructor(bool refuse) payable {
        require(!refuse, "child refused");
    }

    function destroy(address payable to) external {
        selfdestruct(to);
    }

    receive() external payable {}
}

/// What a block's contract txs do, for comparing the two block engines (test/unit/revm-block.test.ts):
/// storage set and cleared, reverts with reasons, running out of gas, creations that succeed or fail,
/// selfdestructs, calls with value, precompile calls and logs.
contract BlockSink {
    mapping(uint256 => uint256) public slots;
    Child public last;

    event Did(address indexed who, uint256 indexed what, bytes data);

    receive() external payable {}

    function set(uint256 k, uint256 v) external {
        slots[k] = v;
        emit Did(msg.sender, k, "");
    }

    function fail(string calldata why) external pure {
        revert(why);
    }

    /// writes new slots until the gas runs out
    function burn() external {
        for (uint256 i = 0; ; i++) slots[1000 + i] = i + 1;
    }

    function spawn(bytes32 salt, bool create2, bool refuse, bool destroyNow, address payable to) external payable returns (address c) {
        if (create2) {
            try new Child{salt: salt, value: msg.value}(refuse) returns (Child ch) {
                c = address(ch);
            } catch {}
        } else {
            try new Child{value: msg.value}(refuse) returns (Child ch) {
                c = address(ch);
            } catch {}
        }
        if (c == address(0)) return c;
        last = Child(payable(c));
        if (destroyNow) Child(payable(c)).destroy(to);
    }

    function destroyLast(address payable to) external {
        last.destroy(to);
    }

    function forward(address to, uint256 value, bytes calldata data) external payable returns (bool ok, bytes memory out) {
        (ok, out) = to.call{value: value}(data);
        emit Did(to, value, out);
    }

    function probe(address target, bytes calldata input) external returns (bool ok, bytes memory out) {
        (ok, out) = target.staticcall(input);
        emit Did(target, out.length, out);
    }
}
