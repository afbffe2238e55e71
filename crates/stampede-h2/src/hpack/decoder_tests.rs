//! The decoder against RFC 7541 Appendix C's examples (C.2 single fields,
//! C.3 requests without Huffman, C.4 with, C.5 and C.6 responses with
//! eviction) and against malformed blocks.

use super::*;

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn fields(d: &mut Decoder, block: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    d.decode(&hex(block), |n, v| {
        out.push((
            String::from_utf8(n.to_vec()).unwrap(),
            String::from_utf8(v.to_vec()).unwrap(),
        ))
    })
    .unwrap();
    out
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect()
}

fn table(d: &Decoder) -> Vec<(String, String)> {
    d.entries()
        .map(|(n, v)| {
            (
                String::from_utf8(n.to_vec()).unwrap(),
                String::from_utf8(v.to_vec()).unwrap(),
            )
        })
        .collect()
}

#[test]
fn c2_single_fields() {
    let mut d = Decoder::new(4096);
    // C.2.1 literal with indexing.
    assert_eq!(
        fields(
            &mut d,
            "400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572"
        ),
        pairs(&[("custom-key", "custom-header")])
    );
    assert_eq!(d.table_size(), 55);
    // C.2.2 literal without indexing.
    let mut d = Decoder::new(4096);
    assert_eq!(
        fields(&mut d, "040c 2f73 616d 706c 652f 7061 7468"),
        pairs(&[(":path", "/sample/path")])
    );
    assert_eq!(d.table_size(), 0);
    // C.2.3 never indexed.
    assert_eq!(
        fields(&mut d, "1008 7061 7373 776f 7264 0673 6563 7265 74"),
        pairs(&[("password", "secret")])
    );
    assert_eq!(d.table_size(), 0);
    // C.2.4 indexed.
    assert_eq!(fields(&mut d, "82"), pairs(&[(":method", "GET")]));
}

fn requests(blocks: [&str; 3]) {
    let mut d = Decoder::new(4096);
    assert_eq!(
        fields(&mut d, blocks[0]),
        pairs(&[
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            (":authority", "www.example.com")
        ])
    );
    assert_eq!(d.table_size(), 57);
    assert_eq!(
        fields(&mut d, blocks[1]),
        pairs(&[
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            (":authority", "www.example.com"),
            ("cache-control", "no-cache")
        ])
    );
    assert_eq!(d.table_size(), 110);
    assert_eq!(
        fields(&mut d, blocks[2]),
        pairs(&[
            (":method", "GET"),
            (":scheme", "https"),
            (":path", "/index.html"),
            (":authority", "www.example.com"),
            ("custom-key", "custom-value")
        ])
    );
    assert_eq!(d.table_size(), 164);
    assert_eq!(
        table(&d),
        pairs(&[
            ("custom-key", "custom-value"),
            ("cache-control", "no-cache"),
            (":authority", "www.example.com")
        ])
    );
}

#[test]
fn c3_requests_without_huffman() {
    requests([
        "8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
        "8286 84be 5808 6e6f 2d63 6163 6865",
        "8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65",
    ]);
}

#[test]
fn c4_requests_with_huffman() {
    requests([
        "8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff",
        "8286 84be 5886 a8eb 1064 9cbf",
        "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf",
    ]);
}

fn responses(blocks: [&str; 3]) {
    // C.5 and C.6 use a 256-octet table, so entries are evicted.
    let mut d = Decoder::new(256);
    assert_eq!(
        fields(&mut d, blocks[0]),
        pairs(&[
            (":status", "302"),
            ("cache-control", "private"),
            ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
            ("location", "https://www.example.com")
        ])
    );
    assert_eq!(d.table_size(), 222);
    assert_eq!(
        fields(&mut d, blocks[1]),
        pairs(&[
            (":status", "307"),
            ("cache-control", "private"),
            ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
            ("location", "https://www.example.com")
        ])
    );
    assert_eq!(d.table_size(), 222);
    assert_eq!(
        fields(&mut d, blocks[2]),
        pairs(&[
            (":status", "200"),
            ("cache-control", "private"),
            ("date", "Mon, 21 Oct 2013 20:13:22 GMT"),
            ("location", "https://www.example.com"),
            ("content-encoding", "gzip"),
            (
                "set-cookie",
                "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"
            )
        ])
    );
    assert_eq!(d.table_size(), 215);
    assert_eq!(
        table(&d),
        pairs(&[
            (
                "set-cookie",
                "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"
            ),
            ("content-encoding", "gzip"),
            ("date", "Mon, 21 Oct 2013 20:13:22 GMT")
        ])
    );
}

#[test]
fn c5_responses_without_huffman() {
    responses([
        "4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 \
         2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
        "4803 3330 37c1 c0bf",
        "88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d \
         54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049 \
         5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e 3d31",
    ]);
}

#[test]
fn c6_responses_with_huffman() {
    responses([
        "4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 \
         2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3",
        "4883 640e ffc1 c0bf",
        "88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab \
         77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f \
         9587 3160 65c0 03ed 4ee5 b106 3d50 07",
    ]);
}

#[test]
fn malformed_blocks_are_refused() {
    let cases: [(&str, HpackError); 6] = [
        ("80", HpackError::BadIndex),
        ("be", HpackError::BadIndex),
        ("400a 6375", HpackError::Truncated),
        ("ff ff ff ff ff ff 7f", HpackError::IntegerOverflow),
        ("82 3f e1 1f", HpackError::BadSizeUpdate),
        ("0085 ffff ffff ff00", HpackError::BadHuffman),
    ];
    for (block, want) in cases {
        let mut d = Decoder::new(4096);
        assert_eq!(d.decode(&hex(block), |_, _| {}), Err(want), "{block}");
    }
    // A size update above what our SETTINGS allow.
    let mut d = Decoder::new(4096);
    assert_eq!(
        d.decode(&hex("3fe2 1f"), |_, _| {}),
        Err(HpackError::BadSizeUpdate)
    );
    // A size update at the start is fine and shrinks the table.
    assert_eq!(d.decode(&hex("20 82"), |_, _| {}), Ok(()));
}

#[test]
fn fields_not_wanted_and_not_indexed_are_skipped_undecoded() {
    // :status 200; date (Huffman, C.6) and etag (bad Huffman) and
    // content-length 3, all literals without indexing, by static name.
    let block = hex(
        "88 0f12 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff \
         0f13 85ff ffff ff00 0f0d 0133",
    );
    let wanted = |n: &[u8]| n == b":status" || n == b"content-length";
    let mut seen = Vec::new();
    let mut d = Decoder::new(4096);
    let decoded = d.decode_wanted(&block, wanted, |n, v| {
        seen.push((
            String::from_utf8(n.to_vec()).unwrap(),
            String::from_utf8(v.to_vec()).unwrap(),
        ))
    });
    assert_eq!(decoded, Ok(()));
    assert_eq!(seen, pairs(&[(":status", "200"), ("content-length", "3")]));
    // Wanted, the etag's bad Huffman is refused.
    let mut d = Decoder::new(4096);
    assert_eq!(d.decode(&block, |_, _| {}), Err(HpackError::BadHuffman));
}

#[test]
fn a_huffman_string_seen_again_decodes_alike_and_a_bad_one_is_still_refused() {
    // C.6's first response three times: the third from the memo.
    let block = "4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 \
                 66e0 82a6 2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3";
    let mut d = Decoder::new(4096);
    let first = fields(&mut d, block);
    for _ in 0..2 {
        assert_eq!(fields(&mut d, block), first);
    }
    let bad = hex("0085 ffff ffff ff00");
    for _ in 0..2 {
        assert_eq!(d.decode(&bad, |_, _| {}), Err(HpackError::BadHuffman));
    }
}
