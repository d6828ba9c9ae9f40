//! Tests of [`super`].

use super::kernels::{erf, fast_exp, softmax};
use super::*;

/// A tiny BERT (width 8, two heads, one layer, ten words) as safetensors bytes, with one
/// tensor's type, shape or presence changed by `edit`.
fn tiny_model(edit: impl Fn(&str, &mut Dtype, &mut Vec<usize>) -> bool) -> Vec<u8> {
    let mut tensors: Vec<(String, Vec<usize>)> = vec![
        ("embeddings.word_embeddings.weight".into(), vec![10, 8]),
        ("embeddings.position_embeddings.weight".into(), vec![16, 8]),
        ("embeddings.token_type_embeddings.weight".into(), vec![2, 8]),
    ];
    let norm = |name: &str, tensors: &mut Vec<(String, Vec<usize>)>| {
        tensors.push((format!("{name}.weight"), vec![8]));
        tensors.push((format!("{name}.bias"), vec![8]));
    };
    norm("embeddings.LayerNorm", &mut tensors);
    let layer = "encoder.layer.0";
    for (name, out, input) in [
        ("attention.self.query", 8, 8),
        ("attention.self.key", 8, 8),
        ("attention.self.value", 8, 8),
        ("attention.output.dense", 8, 8),
        ("intermediate.dense", 16, 8),
        ("output.dense", 8, 16),
    ] {
        tensors.push((format!("{layer}.{name}.weight"), vec![out, input]));
        tensors.push((format!("{layer}.{name}.bias"), vec![out]));
    }
    norm(&format!("{layer}.attention.output.LayerNorm"), &mut tensors);
    norm(&format!("{layer}.output.LayerNorm"), &mut tensors);
    let data: Vec<(String, Dtype, Vec<usize>, Vec<u8>)> = tensors
        .into_iter()
        .enumerate()
        .filter_map(|(index, (name, mut shape))| {
            let mut dtype = Dtype::F32;
            if !edit(&name, &mut dtype, &mut shape) {
                return None;
            }
            let count: usize = shape.iter().product();
            let bytes: Vec<u8> = (0..count)
                .flat_map(|i| {
                    #[expect(clippy::cast_precision_loss, reason = "test values")]
                    let value = ((index * 31 + i) as f32 * 0.37).sin() * 0.5;
                    value.to_le_bytes()
                })
                .take(count * dtype.bitsize() / 8)
                .collect();
            Some((name, dtype, shape, bytes))
        })
        .collect();
    let views = data.iter().map(|(name, dtype, shape, bytes)| {
        (
            name.clone(),
            safetensors::tensor::TensorView::new(*dtype, shape.clone(), bytes).unwrap(),
        )
    });
    safetensors::serialize(views, None).unwrap()
}

fn tiny_config() -> Config {
    serde_json::from_str(
        r#"{"hidden_size": 8, "intermediate_size": 16, "num_attention_heads": 2,
            "num_hidden_layers": 1, "max_position_embeddings": 16}"#,
    )
    .unwrap()
}

fn load_bytes(bytes: &[u8]) -> Result<Bert, BertError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.safetensors");
    std::fs::write(&path, bytes).unwrap();
    Bert::load(tiny_config(), &path)
}

#[test]
fn a_tiny_model_gives_unit_vectors_of_its_configured_width() {
    let bert = load_bytes(&tiny_model(|_, _, _| true)).unwrap();
    assert_eq!(bert.dimensions(), 8);
    let vectors = bert.embed(&[&[1, 2, 3], &[4]]).unwrap();
    assert_eq!(vectors.len(), 2);
    for vector in &vectors {
        assert_eq!(vector.len(), 8);
        assert!(crate::check_vector(vector, 8).is_ok(), "{vector:?}");
    }
    assert!(matches!(
        bert.embed(&[&[10]]),
        Err(BertError::TokenOutOfVocabulary(10))
    ));
    assert!(matches!(bert.embed(&[&[]]), Err(BertError::TextLength(0))));
    assert!(matches!(
        bert.embed(&[&[1; 17]]),
        Err(BertError::TextLength(17))
    ));
}

#[test]
fn damaged_or_foreign_weights_are_typed_errors() {
    let whole = tiny_model(|_, _, _| true);
    let cut = load_bytes(&whole[..whole.len() - 1]).err().unwrap();
    assert!(matches!(cut, BertError::Length { .. }), "{cut}");
    let mut grown = whole.clone();
    grown.push(0);
    assert!(matches!(load_bytes(&grown), Err(BertError::Length { .. })));
    let mut header = whole.clone();
    header[8] = b'[';
    assert!(matches!(load_bytes(&header), Err(BertError::Header { .. })));
    let mut huge = whole.clone();
    huge[..8].copy_from_slice(&(MAX_HEADER_BYTES + 1).to_le_bytes());
    assert!(matches!(
        load_bytes(&huge),
        Err(BertError::HeaderTooLarge { .. })
    ));
    assert!(matches!(load_bytes(&whole[..4]), Err(BertError::Io { .. })));
    let missing = tiny_model(|name, _, _| !name.contains("intermediate.dense.bias"));
    let error = load_bytes(&missing).err().unwrap();
    assert!(
        matches!(&error, BertError::MissingTensor { name, .. } if name == "encoder.layer.0.intermediate.dense.bias"),
        "{error}"
    );
    let half = tiny_model(|name, dtype, _| {
        if name.ends_with("key.bias") {
            *dtype = Dtype::F16;
        }
        true
    });
    let error = load_bytes(&half).err().unwrap();
    assert!(
        matches!(&error, BertError::DType { dtype, .. } if dtype == "F16"),
        "{error}"
    );
    let reshaped = tiny_model(|name, _, shape| {
        if name.ends_with("position_embeddings.weight") {
            *shape = vec![8, 8];
        }
        true
    });
    assert!(matches!(
        load_bytes(&reshaped),
        Err(BertError::Shape { .. })
    ));
}

#[test]
fn configs_the_encoder_cannot_run_are_refused() {
    let with = |change: &str| -> Config {
        let mut value: serde_json::Value = serde_json::from_str(
            r#"{"hidden_size": 8, "intermediate_size": 16, "num_attention_heads": 2,
                "num_hidden_layers": 1, "max_position_embeddings": 16}"#,
        )
        .unwrap();
        let (key, new) = change.split_once('=').unwrap();
        value[key] = serde_json::from_str(new).unwrap();
        serde_json::from_value(value).unwrap()
    };
    assert!(tiny_config().validate().is_ok());
    assert!(matches!(
        with("hidden_act=\"relu\"").validate(),
        Err(BertError::Activation(_))
    ));
    assert!(matches!(
        with("hidden_size=0").validate(),
        Err(BertError::HiddenSize(0))
    ));
    assert!(matches!(
        with("hidden_size=100000").validate(),
        Err(BertError::HiddenSize(100_000))
    ));
    assert!(matches!(
        with("num_attention_heads=3").validate(),
        Err(BertError::Heads { .. })
    ));
    // A huge size is refused before anything is allocated for it.
    for change in [
        "intermediate_size=1000000000000",
        "intermediate_size=0",
        "num_hidden_layers=100000",
        "max_position_embeddings=0",
    ] {
        assert!(
            matches!(with(change).validate(), Err(BertError::OutOfRange { .. })),
            "{change}"
        );
    }
}

#[test]
fn fast_exp_matches_std() {
    for i in -870..=880 {
        #[expect(clippy::cast_precision_loss, reason = "test values")]
        let x = i as f32 / 10.0;
        let expected = x.exp();
        let got = fast_exp(x);
        assert!(
            ((got - expected) / expected).abs() < 1e-6,
            "exp({x}) = {got}, want {expected}"
        );
    }
}

#[test]
fn erf_matches_known_values() {
    // erf from a table (Abramowitz & Stegun, table 7.1).
    for (x, want) in [
        (0.0, 0.0),
        (0.5, 0.520_499_9),
        (1.0, 0.842_700_8),
        (2.0, 0.995_322_3),
        (-1.0, -0.842_700_8),
        (4.0, 1.0),
    ] {
        assert!((erf(x) - want).abs() < 3e-7, "erf({x}) = {}", erf(x));
    }
}

#[test]
fn softmax_sums_to_one_and_keeps_order() {
    let mut s = [1.0, 2.0, 3.0, -50.0];
    softmax(&mut s);
    assert!((s.iter().sum::<f32>() - 1.0).abs() < 1e-6);
    assert!(s[2] > s[1] && s[1] > s[0] && s[3] < 1e-20);
}

#[test]
fn layer_norm_centres_and_scales() {
    let norm = Norm {
        gamma: vec![1.0; 4],
        beta: vec![0.5; 4],
    };
    let mut row = [1.0, 2.0, 3.0, 4.0];
    layer_norm(&mut row, &norm, 1e-12);
    let mean = row.iter().sum::<f32>() / 4.0;
    assert!((mean - 0.5).abs() < 1e-6);
    assert!((row[3] - row[0] - 2.683_281_6).abs() < 1e-5);
}

#[test]
fn the_blocked_transpose_is_the_plain_one() {
    // Sizes on and off the block's edges, and a part stacked beside another.
    for (rows, columns) in [(1, 1), (3, 70), (64, 32), (33, 95)] {
        let values: Vec<f32> = (0..rows * columns)
            .map(|i| f32::from(u16::try_from(i).unwrap()) * 0.5 - 7.0)
            .collect();
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let stride = rows * 2;
        let mut blocked = vec![0.0_f32; columns * stride];
        super::transpose_into(&bytes, (rows, columns), &mut blocked, (stride, rows));
        let mut plain = vec![0.0_f32; columns * stride];
        for row in 0..rows {
            for column in 0..columns {
                plain[column * stride + rows + row] = values[row * columns + column];
            }
        }
        assert_eq!(blocked, plain, "{rows}x{columns}");
    }
}
