// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// The two Token.sol calls the pair makes.
interface IToken {
    function balanceOf(address who) external view returns (uint256);
    function transfer(address to, uint256 amount) external returns (bool);
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
}

/// A minimal constant-product pair in the manner of Uniswap V2 (written for ferry's fork-mode tests,
/// docs/fork-mode.md "Benchmark"): liquidity is minted from the tokens sent above the reserves, a swap
/// pays out first and then checks the 0.3 % fee invariant on what came in, reserves and the last block
/// time share one storage slot (uint112, uint112, uint32) as in V2. No LP-token transfers, no price
/// oracle, no flash swaps: `swap`'s `data` must be empty.
contract Pair {
    address public immutable token0;
    address public immutable token1;

    uint112 private reserve0;
    uint112 private reserve1;
    uint32 private blockTimestampLast;

    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    uint256 private entered;

    /// liquidity locked at address(0) by the first mint, so the supply never returns to zero
    uint256 public constant MINIMUM_LIQUIDITY = 1000;

    event Mint(address indexed sender, uint256 amount0, uint256 amount1, uint256 liquidity);
    event Swap(address indexed sender, uint256 amount0In, uint256 amount1In, uint256 amount0Out, uint256 amount1Out, address indexed to);
    event Sync(uint112 reserve0, uint112 reserve1);

    constructor(address tokenA, address tokenB) {
        require(tokenA != tokenB && tokenA != address(0) && tokenB != address(0), "bad tokens");
        token0 = tokenA;
        token1 = tokenB;
    }

    modifier once() {
        require(entered == 0, "reentered");
        entered = 1;
        _;
        entered = 0;
    }

    function getReserves() external view returns (uint112, uint112, uint32) {
        return (reserve0, reserve1, blockTimestampLast);
    }

    /// Output for `amountIn` against reserves (in, out) after the 0.3 % fee: in*997*rOut / (rIn*1000 + in*997).
    function getAmountOut(uint256 amountIn, uint256 reserveIn, uint256 reserveOut) public pure returns (uint256) {
        require(amountIn > 0, "no input");
        require(reserveIn > 0 && reserveOut > 0, "no liquidity");
        uint256 inAfterFee = amountIn * 997;
        return (inAfterFee * reserveOut) / (reserveIn * 1000 + inAfterFee);
    }

    /// Liquidity for the tokens held above the reserves, credited to `to`.
    function mint(address to) external once returns (uint256 liquidity) {
        (uint256 r0, uint256 r1) = (reserve0, reserve1);
        uint256 b0 = IToken(token0).balanceOf(address(this));
        uint256 b1 = IToken(token1).balanceOf(address(this));
        uint256 a0 = b0 - r0;
        uint256 a1 = b1 - r1;
        if (totalSupply == 0) {
            liquidity = _sqrt(a0 * a1) - MINIMUM_LIQUIDITY;
            _credit(address(0), MINIMUM_LIQUIDITY);
        } else {
            uint256 l0 = (a0 * totalSupply) / r0;
            uint256 l1 = (a1 * totalSupply) / r1;
            liquidity = l0 < l1 ? l0 : l1;
        }
        require(liquidity > 0, "no liquidity minted");
        _credit(to, liquidity);
        _setReserves(b0, b1);
        emit Mint(msg.sender, a0, a1, liquidity);
    }

    /// Pays out the amounts asked for, then requires that what was sent in keeps
    /// (b0*1000 - in0*3) * (b1*1000 - in1*3) >= r0 * r1 * 1000^2.
    function swap(uint256 amount0Out, uint256 amount1Out, address to, bytes memory data) public once {
        require(data.length == 0, "flash swaps not supported");
        require(amount0Out > 0 || amount1Out > 0, "no output");
        (uint256 r0, uint256 r1) = (reserve0, reserve1);
        require(amount0Out < r0 && amount1Out < r1, "not enough liquidity");
        require(to != token0 && to != token1, "bad recipient");
        if (amount0Out > 0) require(IToken(token0).transfer(to, amount0Out), "transfer failed");
        if (amount1Out > 0) require(IToken(token1).transfer(to, amount1Out), "transfer failed");
        uint256 b0 = IToken(token0).balanceOf(address(this));
        uint256 b1 = IToken(token1).balanceOf(address(this));
        uint256 in0 = b0 > r0 - amount0Out ? b0 - (r0 - amount0Out) : 0;
        uint256 in1 = b1 > r1 - amount1Out ? b1 - (r1 - amount1Out) : 0;
        require(in0 > 0 || in1 > 0, "no input");
        require((b0 * 1000 - in0 * 3) * (b1 * 1000 - in1 * 3) >= r0 * r1 * 1_000_000, "invariant");
        _setReserves(b0, b1);
        emit Swap(msg.sender, in0, in1, amount0Out, amount1Out, to);
    }

    /// The router-free flow in one transaction: takes `amountIn` of `tokenIn` from the caller (approved
    /// beforehand), pays the getAmountOut of the other token to `to`; reverts below `minOut`.
    function swapIn(address tokenIn, uint256 amountIn, uint256 minOut, address to) external returns (uint256 amountOut) {
        bool zeroIn = tokenIn == token0;
        require(zeroIn || tokenIn == token1, "not a pair token");
        amountOut = zeroIn ? getAmountOut(amountIn, reserve0, reserve1) : getAmountOut(amountIn, reserve1, reserve0);
        require(amountOut >= minOut, "below minOut");
        require(IToken(tokenIn).transferFrom(msg.sender, address(this), amountIn), "transferFrom failed");
        swap(zeroIn ? 0 : amountOut, zeroIn ? amountOut : 0, to, "");
    }

    /// Sets the reserves to the balances.
    function sync() external once {
        _setReserves(IToken(token0).balanceOf(address(this)), IToken(token1).balanceOf(address(this)));
    }

    function _credit(address to, uint256 amount) private {
        totalSupply += amount;
        balanceOf[to] += amount;
    }

    function _setReserves(uint256 b0, uint256 b1) private {
        require(b0 <= type(uint112).max && b1 <= type(uint112).max, "overflow");
        reserve0 = uint112(b0);
        reserve1 = uint112(b1);
        blockTimestampLast = uint32(block.timestamp);
        emit Sync(uint112(b0), uint112(b1));
    }

    /// Integer square root (Babylonian method).
    function _sqrt(uint256 y) private pure returns (uint256 z) {
        if (y > 3) {
            z = y;
            uint256 x = y / 2 + 1;
            while (x < z) {
                z = x;
                x = (y / x + x) / 2;
            }
        } else if (y != 0) {
            z = 1;
        }
    }
}
