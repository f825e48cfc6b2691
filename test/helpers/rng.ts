/**
 * A small deterministic generator (xorshift32: Marsaglia, "Xorshift RNGs", 2003, shifts 13/17/5) for
 * randomized tests, so a failure names a case that replays from its seed. Numbers in [0, 1).
 */
export function xorshift32(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 0x1_0000_0000;
  };
}
