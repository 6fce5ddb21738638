//! `read_image` against the real local provider: each format's header, the extension checked
//! against the bytes, the byte cap before reading past it, observations, and registration only
//! with an image sink.

mod support;

use base64::Engine as _;
use insta::assert_snapshot;
use seam::Signal;
use seam_policy::Observed;
use seam_tools::{ContentBlock, ImageSink, ImageType, Toolset};
use serde_json::json;
use std::sync::Arc;
use support::counting::{Counting, Counts};
use support::{Harness, code, images, text};

struct Sink {
    max: u64,
    only: Option<ImageType>,
}

impl ImageSink for Sink {
    fn max_bytes(&self) -> u64 {
        self.max
    }
    fn accepts(&self, t: ImageType) -> bool {
        self.only.is_none_or(|o| o == t)
    }
}

fn with_sink(max: u64, only: Option<ImageType>) -> (Harness, Arc<Counts>) {
    let counts = Arc::new(Counts::default());
    let c = counts.clone();
    let mut h = Harness::build(true, move |root| {
        Arc::new(Counting {
            inner: Arc::new(support::local(root)),
            counts: c,
            hide_sizes: false,
            hide_search: false,
        })
    });
    h.tools = Toolset::builder(h.fs.as_ref())
        .image_sink(Arc::new(Sink { max, only }))
        .build();
    (h, counts)
}

fn image_tool() -> (Harness, Arc<Counts>) {
    with_sink(seam_tools::read_image::DEFAULT_MAX_IMAGE_BYTES, None)
}

#[tokio::test]
async fn is_registered_only_with_an_image_sink() {
    assert!(Harness::bare().tools.get("read_image").is_none());
    let (h, _) = image_tool();
    assert_eq!(
        h.tools.names(),
        ["read", "write", "edit", "read_image", "glob", "grep"]
    );
    assert!(
        h.tools
            .get("read_image")
            .expect("registered")
            .parallel_safe()
    );
}

#[tokio::test]
async fn returns_each_format_with_its_dimensions_and_the_exact_bytes() {
    let (h, counts) = image_tool();
    let cases: [(&str, Vec<u8>, &str); 7] = [
        ("a.png", images::png(640, 480), "image/png"),
        ("b.JPG", images::jpeg(1024, 768), "image/jpeg"),
        ("c.jpeg", images::jpeg(3, 2), "image/jpeg"),
        ("d.gif", images::gif(16, 9), "image/gif"),
        ("e.webp", images::webp_extended(4000, 3000), "image/webp"),
        ("f.webp", images::webp_lossless(300, 200), "image/webp"),
        ("g.webp", images::webp_lossy(120, 90), "image/webp"),
    ];
    let mut rendered = Vec::new();
    for (name, bytes, media) in cases {
        h.put(name, &bytes);
        counts.reset();
        let r = h.call("read_image", json!({"file_path": name})).await;
        let out = r
            .as_ref()
            .unwrap_or_else(|e| panic!("{name}: {}", e.render()));
        let ContentBlock::Image { data, media_type } = &out.content[1] else {
            panic!("{name}: no image block");
        };
        assert_eq!(media_type, media);
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(data)
            .expect("base64");
        assert_eq!(
            decoded,
            h.bytes(name),
            "{name}: the bytes on disk, verbatim"
        );
        assert_eq!(counts.get().0, 1, "{name}: one stat");
        rendered.push(h.render(&r));
    }
    assert_snapshot!("formats", rendered.join("\n---\n"));
}

#[tokio::test]
async fn records_the_stat_version_as_observed() {
    let (h, _) = image_tool();
    h.put("a.png", images::png(1, 1));
    text(&h.call("read_image", json!({"file_path": "a.png"})).await);
    let t =
        h.fs.resolve(&h.display("a.png"), Default::default(), &Signal::none())
            .await
            .expect("resolve");
    let v =
        h.fs.stat(&t, &Signal::none())
            .await
            .expect("stat")
            .expect("present")
            .version;
    assert_eq!(
        h.policy
            .as_ref()
            .expect("policy")
            .observation(&h.owner, &t.key),
        Observed::Present(v)
    );
}

#[tokio::test]
async fn argument_and_deployment_gates_come_before_any_io() {
    let (h, counts) = with_sink(1024, Some(ImageType::Png));
    let mut rendered = Vec::new();
    for args in [
        json!({"file_path": ""}),
        json!({"file_path": "notes.txt"}),
        json!({"file_path": "noext"}),
        json!({"file_path": "pic.gif"}),
    ] {
        let r = h.call("read_image", args.clone()).await;
        assert!(r.is_err());
        rendered.push(format!("{args} => {}", h.render(&r)));
    }
    assert_eq!(counts.get(), (0, 0, 0));
    assert_snapshot!("gates", rendered.join("\n"));
}

#[tokio::test]
async fn a_mismatched_extension_is_refused_with_the_repair_text() {
    let (h, _) = image_tool();
    h.put("actually-gif.png", images::gif(2, 2));
    let r = h
        .call("read_image", json!({"file_path": "actually-gif.png"}))
        .await;
    assert_eq!(code(&r), "IMAGE_TYPE_MISMATCH");
    assert_snapshot!("mismatch", h.render(&r));
    h.put("text.jpg", "not an image at all");
    assert_eq!(
        code(&h.call("read_image", json!({"file_path": "text.jpg"})).await),
        "IMAGE_TYPE_MISMATCH"
    );
    assert_eq!(
        h.policy.as_ref().expect("policy").owner_count(),
        0,
        "a refused image records nothing"
    );
}

#[tokio::test]
async fn a_truncated_header_is_malformed() {
    let (h, _) = image_tool();
    h.put("cut.png", &images::png(5, 5)[..18]);
    let r = h.call("read_image", json!({"file_path": "cut.png"})).await;
    assert_eq!(code(&r), "IMAGE_MALFORMED");
    assert_snapshot!("malformed", h.render(&r));
}

#[tokio::test]
async fn the_byte_cap_is_inclusive_and_enforced_before_reading() {
    let png = images::png(8, 8);
    let size = png.len() as u64;
    let (h, counts) = with_sink(size, None);
    h.put("fits.png", &png);
    text(&h.call("read_image", json!({"file_path": "fits.png"})).await);
    let mut bigger = png.clone();
    bigger.push(0);
    h.put("big.png", &bigger);
    counts.reset();
    let r = h.call("read_image", json!({"file_path": "big.png"})).await;
    assert_eq!(code(&r), "FS_TOO_LARGE");
    assert_snapshot!("too_large", h.render(&r));
    assert_eq!(
        counts.read_bytes.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "refused from the stat, nothing read"
    );
}

#[tokio::test]
async fn a_missing_image_records_absence_and_a_directory_is_not_a_regular_file() {
    let (h, _) = image_tool();
    let r = h.call("read_image", json!({"file_path": "none.png"})).await;
    assert_eq!(code(&r), "FS_NOT_FOUND");
    assert_snapshot!("missing", h.render(&r));
    let t =
        h.fs.resolve(&h.display("none.png"), Default::default(), &Signal::none())
            .await
            .expect("resolve");
    assert_eq!(
        h.policy
            .as_ref()
            .expect("policy")
            .observation(&h.owner, &t.key),
        Observed::Absent
    );
    std::fs::create_dir(h.path("dir.png")).expect("mkdir");
    let r = h.call("read_image", json!({"file_path": "dir.png"})).await;
    assert_eq!(code(&r), "FS_NOT_REGULAR_FILE");
    assert_snapshot!("directory", h.render(&r));
}

#[tokio::test]
async fn a_cancelled_call_is_fs_aborted() {
    let (mut h, counts) = image_tool();
    h.put("a.png", images::png(1, 1));
    h.signal = Signal::new();
    h.signal.cancel();
    let r = h.call("read_image", json!({"file_path": "a.png"})).await;
    assert_eq!(code(&r), "FS_ABORTED");
    assert_eq!(counts.get(), (0, 0, 0));
    assert_eq!(h.policy.as_ref().expect("policy").owner_count(), 0);
}
