//! The random numbers `dlqspec explore` draws: SplitMix64, small, fast and the same everywhere.
//!
//! Every case gets its own generator, seeded from the run's seed, the contract and the case's
//! number, so case 17 of a contract is the same scenario whatever ran before it: a run is
//! replayed by its seed alone, with or without `--budget`, and `--contract` does not change it.

/// A SplitMix64 generator (Steele, Lea and Flood, 2014).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The generator of case `case` of the contract named `contract`, in the run seeded `seed`.
    pub(crate) fn for_case(seed: u64, contract: &str, case: u64) -> Self {
        // FNV-1a of the name: stable across builds and platforms, unlike `DefaultHasher`.
        let named = contract
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
                (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
            });
        let mut mixer = Rng(seed ^ named.rotate_left(17));
        let base = mixer.next_u64();
        Rng(base ^ case.wrapping_mul(0x9e37_79b9_7f4a_7c15))
    }

    /// A second generator for a side of a case (`stream` names it), drawn without moving
    /// this one: what this one draws next is the same whether the side draws or not.
    pub(crate) fn fork(&self, stream: u64) -> Rng {
        let mut mixer = Rng(self.0 ^ stream.wrapping_mul(0xd1b5_4a32_d192_ed03));
        Rng(mixer.next_u64())
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number from 0 to `n - 1`; 0 when `n` is 0.
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        // Multiply-shift: no modulo bias worth the name at these sizes, and no division.
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// A number from `low` to `high`, both included.
    pub(crate) fn between(&mut self, low: u64, high: u64) -> u64 {
        low + self.below((high - low + 1) as usize) as u64
    }

    /// True `percent` times in a hundred.
    pub(crate) fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    /// One of `items`, each as likely as the others.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// One of `choices`, each as likely as its weight says.
    pub(crate) fn weighted<T: Clone>(&mut self, choices: &[(usize, T)]) -> T {
        let total: usize = choices.iter().map(|(weight, _)| weight).sum();
        let mut roll = self.below(total);
        for (weight, choice) in choices {
            if roll < *weight {
                return choice.clone();
            }
            roll -= weight;
        }
        choices[choices.len() - 1].1.clone()
    }

    /// `items` in a random order (Fisher-Yates).
    pub(crate) fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }
}

/// A seed for a run that was given none: the clock's nanoseconds and the process id, which is
/// different enough from run to run. It is printed, so the run can be replayed.
pub(crate) fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut rng = Rng(nanos ^ u64::from(std::process::id()).rotate_left(32));
    // Seeds people can type: at most 9 digits.
    rng.next_u64() % 1_000_000_000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_draws_the_same_numbers() {
        let draw = |seed| {
            let mut rng = Rng::new(seed);
            (0..5).map(|_| rng.next_u64()).collect::<Vec<_>>()
        };
        assert_eq!(draw(7), draw(7));
        assert_ne!(draw(7), draw(8));
        // SplitMix64's published first output for seed 0.
        assert_eq!(Rng::new(0).next_u64(), 0xe220_a839_7b1d_cdaf);
    }

    #[test]
    fn cases_and_contracts_draw_from_their_own_streams() {
        let first = |contract: &str, case| Rng::for_case(1, contract, case).next_u64();
        assert_eq!(first("dlq-consumer", 3), first("dlq-consumer", 3));
        assert_ne!(first("dlq-consumer", 3), first("dlq-consumer", 4));
        assert_ne!(first("dlq-consumer", 3), first("another-contract", 3));
        assert_ne!(
            Rng::for_case(1, "x", 0).next_u64(),
            Rng::for_case(2, "x", 0).next_u64()
        );
    }

    #[test]
    fn a_fork_draws_its_own_numbers_and_moves_nothing() {
        let rng = Rng::new(9);
        let (mut a, mut b) = (rng.fork(1), rng.fork(2));
        let mut parent = rng.clone();
        let next = parent.next_u64();
        assert_eq!(rng.clone().next_u64(), next, "forking moved the parent");
        let (x, y) = (a.next_u64(), b.next_u64());
        assert!(x != y && x != next && y != next);
        assert_eq!(Rng::new(9).fork(1).next_u64(), x);
    }

    #[test]
    fn draws_stay_in_their_ranges_and_reach_both_ends() {
        let mut rng = Rng::new(42);
        let mut seen = [false; 4];
        for _ in 0..1000 {
            let n = rng.between(3, 6);
            assert!((3..=6).contains(&n));
            seen[(n - 3) as usize] = true;
        }
        assert_eq!(seen, [true; 4]);
        assert_eq!(rng.below(0), 0);
        let never = rng.weighted(&[(0, 'a'), (5, 'b')]);
        assert_eq!(never, 'b');
        let mut items = [1, 2, 3, 4, 5];
        rng.shuffle(&mut items);
        items.sort_unstable();
        assert_eq!(items, [1, 2, 3, 4, 5]);
    }

    #[test]
    fn fresh_seeds_are_short_enough_to_type() {
        assert!(fresh_seed() < 1_000_000_000);
    }
}
