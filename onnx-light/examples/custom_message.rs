//! Declare a protobuf message of your own with the derive: decode it borrowing from the
//! input, then own it, and encode it back.

use onnx_light::prelude::*;

/// A message with a scalar, a string, repeated numbers, bytes and an enum.
#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
#[proto(name = "example.Checkpoint")]
struct Checkpoint<'a> {
    #[proto(1)]
    step: Option<u64>,
    #[proto(2)]
    label: Option<Str<'a>>,
    #[proto(3, packed)]
    losses: Vec<f32>,
    #[proto(4)]
    state: Option<Bytes<'a>>,
    #[proto(5)]
    phase: Option<EnumValue<Phase>>,
    #[proto(unknown_fields)]
    unknown: UnknownFields<'a>,
}

#[derive(ProtoEnum, Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Warmup = 0,
    Train = 1,
}

fn main() -> Result<(), onnx_light::Error> {
    let c = Checkpoint {
        step: Some(1200),
        label: Some("run-7".into()),
        losses: vec![0.9, 0.5, 0.31],
        state: Some(Bytes::from(vec![7u8; 64])),
        phase: Some(Phase::Train.into()),
        ..Checkpoint::default()
    };
    let bytes = c.encode_to_vec()?;
    // Borrowing decode: `label` and `state` are slices of `bytes`.
    let view = Checkpoint::decode(&bytes)?;
    assert!(view.state.as_ref().is_some_and(|s| s.is_borrowed()));
    println!(
        "step {} label {} losses {:?}",
        view.step(),
        view.label(),
        view.losses
    );
    // Owned: outlives `bytes`.
    let owned: Checkpoint<'static> = view.into_owned();
    assert_eq!(owned, c);
    assert_eq!(owned.encode_to_vec()?, bytes);
    Ok(())
}
