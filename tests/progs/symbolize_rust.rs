// symbolize_rust.rs — Rust allocations at known functions, for
// tests/e2e/symbolize_rust.sh (built as crate `r`, once with legacy and
// once with v0 symbol mangling): an inherent method of a generic type, a
// trait method, a const-generic function in a module, a closure. Prints
// what it built so nothing is optimized away.
use std::collections::HashMap;

pub struct Holder<T> {
    v: Vec<T>,
}

impl<T: Clone> Holder<T> {
    #[inline(never)]
    pub fn grow(&mut self, x: T, n: usize) {
        for _ in 0..n {
            self.v.push(x.clone());
        }
    }
}

trait Maker {
    fn make(&self, n: usize) -> Vec<u8>;
}

struct M;

impl Maker for M {
    #[inline(never)]
    fn make(&self, n: usize) -> Vec<u8> {
        vec![7u8; n] // exactly n bytes
    }
}

mod inner {
    #[inline(never)]
    pub fn boxed<const N: usize>() -> Box<[u64; N]> {
        Box::new([1u64; N]) // exactly 8 * N bytes
    }
}

#[inline(never)]
fn closure_alloc(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("s{}", i)).collect()
}

fn main() {
    let mut h: Holder<u64> = Holder { v: Vec::new() };
    h.grow(5, 100000);
    let m: &dyn Maker = &M;
    let a = m.make(1 << 20);
    let b = inner::boxed::<4096>();
    let c = closure_alloc(1000);
    let mut map = HashMap::new();
    for i in 0..1000 {
        map.insert(i, i * 2);
    }
    println!("{} {} {} {} {}", h.v.len(), a.len(), b.len(), c.len(), map.len());
}
