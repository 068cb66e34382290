//! A message with a lifetime: borrowed fields (`Str<'a>`, `Bytes<'a>`) next to owned ones
//! (`String`, `Vec<u8>`, `Bytes<'static>`). Borrow mode slices the input for the former
//! only; `into_owned` and `decode_owned` give a `'static` message.

use onnx_light::prelude::*;

#[derive(ProtoMessage, Debug, Default, Clone, PartialEq)]
struct Mixed<'a> {
    #[proto(1)]
    borrowed_name: Option<Str<'a>>,
    #[proto(2)]
    owned_name: Option<String>,
    #[proto(3)]
    borrowed_data: Option<Bytes<'a>>,
    #[proto(4)]
    owned_data: Vec<u8>,
    #[proto(5)]
    static_data: Option<Bytes<'static>>,
    #[proto(6)]
    names: Vec<Str<'a>>,
    #[proto(7)]
    count: i64,
}

fn main() {
    let original = Mixed {
        borrowed_name: Some("view".into()),
        owned_name: Some("copy".to_string()),
        borrowed_data: Some(Bytes::from(vec![1u8, 2, 3])),
        owned_data: vec![4, 5],
        static_data: Some(Bytes::from(vec![6u8; 16])),
        names: vec!["a".into(), "b".into()],
        count: 7,
    };
    let buf = original.encode_to_vec().unwrap();

    let view = Mixed::decode(&buf).unwrap();
    assert_eq!(view, original);
    assert_eq!(view.borrowed_name(), "view");
    assert_eq!(view.owned_name(), "copy");
    assert!(view.borrowed_name.as_ref().unwrap().is_borrowed());
    assert!(view.borrowed_data.as_ref().unwrap().is_borrowed());
    assert!(!view.static_data.as_ref().unwrap().is_borrowed());
    assert!(view.names[1].is_borrowed() && view.names[1] == "b");

    let owned: Mixed<'static> = view.into_owned();
    let copied: Mixed<'static> = Mixed::decode_owned(&buf).unwrap();
    drop(buf);
    assert_eq!(owned, original);
    assert_eq!(copied, original);
    assert!(!copied.borrowed_data.as_ref().unwrap().is_borrowed());
}
