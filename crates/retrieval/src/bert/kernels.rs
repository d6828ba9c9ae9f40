//! The element-wise kernels of [`super::Bert`]: masked softmax, GELU, residual + layer norm,
//! pooling, each plain Rust the compiler vectorises.

use candle_core::{CpuStorage, Storage, Tensor};
use rayon::prelude::*;

use super::{BertError, Norm};

// The loops below are plain Rust written so the compiler vectorises them; each runs through
// `pulp::Arch::dispatch`, which compiles it for the widest vector unit the CPU has (AVX-512,
// AVX2, else the baseline) and picks one at run time, without unsafe code here.

/// Softmax of each row of one text's `[heads][width][width]` scores over its first `len`
/// columns; the padding columns and rows get 0.
pub(super) struct MaskedSoftmax<'a> {
    pub(super) out: &'a mut [f32],
    pub(super) scores: &'a [f32],
    pub(super) width: usize,
    pub(super) len: usize,
}

impl pulp::WithSimd for MaskedSoftmax<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let width = self.width;
        for (out, scores) in self
            .out
            .chunks_exact_mut(width * width)
            .zip(self.scores.chunks_exact(width * width))
        {
            for (out_row, row) in out
                .chunks_exact_mut(width)
                .zip(scores.chunks_exact(width))
                .take(self.len)
            {
                out_row[..self.len].copy_from_slice(&row[..self.len]);
                softmax(&mut out_row[..self.len]);
            }
        }
    }
}

/// `out = gelu(input + bias)`, row by row.
pub(super) struct GeluRows<'a> {
    pub(super) out: &'a mut [f32],
    pub(super) input: &'a [f32],
    pub(super) bias: &'a [f32],
}

impl pulp::WithSimd for GeluRows<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let width = self.bias.len();
        for (out_row, in_row) in self
            .out
            .chunks_exact_mut(width)
            .zip(self.input.chunks_exact(width))
        {
            for ((o, &x), &b) in out_row.iter_mut().zip(in_row).zip(self.bias) {
                *o = gelu(x + b);
            }
        }
    }
}

/// `states = layer_norm(states + input + bias)`, row by row.
pub(super) struct AddNorm<'a> {
    pub(super) states: &'a mut [f32],
    pub(super) input: &'a [f32],
    pub(super) bias: &'a [f32],
    pub(super) norm: &'a Norm,
    pub(super) eps: f32,
}

impl pulp::WithSimd for AddNorm<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let width = self.bias.len();
        for (row, input) in self
            .states
            .chunks_exact_mut(width)
            .zip(self.input.chunks_exact(width))
        {
            for ((s, &x), &b) in row.iter_mut().zip(input).zip(self.bias) {
                *s += x + b;
            }
            layer_norm(row, self.norm, self.eps);
        }
    }
}

/// Rows handed to one task in element-wise passes.
pub(super) const ROWS_PER_TASK: usize = 64;

/// Runs `f` over the values of a contiguous CPU tensor without copying them.
pub(super) fn with_slice(tensor: &Tensor, f: impl FnOnce(&[f32])) -> Result<(), BertError> {
    let (storage, layout) = tensor.storage_and_layout();
    let Storage::Cpu(CpuStorage::F32(values)) = &*storage else {
        return Err(BertError::Internal("expected an f32 CPU tensor"));
    };
    let Some((start, end)) = layout.contiguous_offsets() else {
        return Err(BertError::Internal("expected a contiguous tensor"));
    };
    f(&values[start..end]);
    Ok(())
}

#[inline(always)]
pub(super) fn softmax(scores: &mut [f32]) {
    let max = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    for s in scores.iter_mut() {
        *s = fast_exp(*s - max);
    }
    let inverse = 1.0 / sum(scores);
    for s in scores.iter_mut() {
        *s *= inverse;
    }
}

/// `states = layer_norm(states + input + bias)`, row by row.
pub(super) fn add_and_norm(
    states: &mut [f32],
    input: &[f32],
    bias: &[f32],
    norm: &Norm,
    eps: f32,
    hidden: usize,
) {
    states
        .par_chunks_mut(hidden * ROWS_PER_TASK)
        .zip(input.par_chunks(hidden * ROWS_PER_TASK))
        .for_each(|(states, input)| {
            pulp::Arch::new().dispatch(AddNorm {
                states,
                input,
                bias,
                norm,
                eps,
            });
        });
}

/// A sum in 16 lanes, so the compiler can vectorise it (a plain float sum is a serial chain).
#[inline(always)]
pub(super) fn sum(values: &[f32]) -> f32 {
    let mut lanes = [0.0_f32; 16];
    let chunks = values.chunks_exact(16);
    let tail: f32 = chunks.remainder().iter().sum();
    for chunk in chunks {
        for (lane, &x) in lanes.iter_mut().zip(chunk) {
            *lane += x;
        }
    }
    lanes.iter().sum::<f32>() + tail
}

/// The sum of squared differences from `mean`, in 16 lanes like [`sum`].
#[inline(always)]
pub(super) fn squared_deviation(values: &[f32], mean: f32) -> f32 {
    let mut lanes = [0.0_f32; 16];
    let chunks = values.chunks_exact(16);
    let tail: f32 = chunks
        .remainder()
        .iter()
        .map(|x| (x - mean) * (x - mean))
        .sum();
    for chunk in chunks {
        for (lane, &x) in lanes.iter_mut().zip(chunk) {
            *lane += (x - mean) * (x - mean);
        }
    }
    lanes.iter().sum::<f32>() + tail
}

#[inline(always)]
pub(super) fn layer_norm(row: &mut [f32], norm: &Norm, eps: f32) {
    #[expect(clippy::cast_precision_loss, reason = "a small row")]
    let len = row.len() as f32;
    let mean = sum(row) / len;
    let variance = squared_deviation(row, mean) / len;
    let inverse = 1.0 / (variance + eps).sqrt();
    for ((x, &g), &b) in row.iter_mut().zip(&norm.gamma).zip(&norm.beta) {
        *x = (*x - mean) * inverse * g + b;
    }
}

pub(super) fn mean_normalised(states: &[f32], hidden: usize) -> Vec<f32> {
    let mut mean = vec![0.0_f32; hidden];
    for row in states.chunks_exact(hidden) {
        for (m, &x) in mean.iter_mut().zip(row) {
            *m += x;
        }
    }
    let norm = mean.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        for m in &mut mean {
            *m /= norm;
        }
    }
    mean
}

/// `x · Φ(x)` with the exact (erf) form BERT was trained with.
#[inline(always)]
pub(super) fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// erf by Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7), branch-free.
#[inline(always)]
pub(super) fn erf(x: f32) -> f32 {
    const P: f32 = 0.327_591_1;
    const A: [f32; 5] = [
        0.254_829_6,
        -0.284_496_74,
        1.421_413_8,
        -1.453_152_1,
        1.061_405_4,
    ];
    let a = x.abs();
    let t = 1.0 / (1.0 + P * a);
    let poly = t * (A[0] + t * (A[1] + t * (A[2] + t * (A[3] + t * A[4]))));
    let y = 1.0 - poly * fast_exp(-a * a);
    y.copysign(x)
}

/// e^x for x in about [-87, 88] (clamped), relative error about 2e-7, branch-free so loops
/// over it vectorise.
#[inline(always)]
pub(super) fn fast_exp(x: f32) -> f32 {
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    // Adding then subtracting 1.5 * 2^23 rounds to the nearest integer.
    const ROUND: f32 = 12_582_912.0;
    let x = x.clamp(-87.0, 88.0);
    let n = (x * std::f32::consts::LOG2_E + ROUND) - ROUND;
    let r = x - n * LN2_HI - n * LN2_LO;
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0))))));
    #[expect(clippy::cast_possible_truncation, reason = "n is a small integer")]
    let exponent = (n as i32 + 127).cast_unsigned();
    p * f32::from_bits(exponent << 23)
}
