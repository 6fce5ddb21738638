//! The four image formats `read_image` takes: which one an extension declares, which one the
//! bytes are, and the picture's size — from the headers alone.
//!
//! Only headers are parsed (no decoding), so this needs no image library: the tool reports
//! dimensions and refuses a file whose bytes are not what its name says, and leaves pixels to
//! whoever shows the image.

/// A supported image format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ImageType {
    /// PNG.
    Png,
    /// JPEG.
    Jpeg,
    /// WebP.
    Webp,
    /// GIF.
    Gif,
}

impl ImageType {
    /// The format a path's extension declares (case-insensitive): `.png`, `.jpg`/`.jpeg`,
    /// `.webp`, `.gif`.
    pub fn from_path(path: &str) -> Option<Self> {
        let ext = extension(path)?.to_ascii_lowercase();
        match ext.as_str() {
            ".png" => Some(Self::Png),
            ".jpg" | ".jpeg" => Some(Self::Jpeg),
            ".webp" => Some(Self::Webp),
            ".gif" => Some(Self::Gif),
            _ => None,
        }
    }

    /// The media type.
    pub fn media_type(self) -> &'static str {
        match self {
            Self::Png => "image/png",
            Self::Jpeg => "image/jpeg",
            Self::Webp => "image/webp",
            Self::Gif => "image/gif",
        }
    }

    /// The format the bytes are, by their signature.
    pub fn sniff(bytes: &[u8]) -> Option<Self> {
        if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
            Some(Self::Png)
        } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
            Some(Self::Jpeg)
        } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
            Some(Self::Webp)
        } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
            Some(Self::Gif)
        } else {
            None
        }
    }

    /// Width and height in pixels, from the header of bytes already known to be this format.
    pub fn dimensions(self, bytes: &[u8]) -> Option<(u32, u32)> {
        match self {
            Self::Png => png(bytes),
            Self::Jpeg => jpeg(bytes),
            Self::Webp => webp(bytes),
            Self::Gif => gif(bytes),
        }
    }
}

/// The extension of the last path component, with its dot, as written.
pub fn extension(path: &str) -> Option<&str> {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let dot = name.rfind('.')?;
    (dot > 0).then(|| &name[dot..])
}

fn be16(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from(u16::from_be_bytes([
        *b.get(at)?,
        *b.get(at + 1)?,
    ])))
}

fn le16(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from(u16::from_le_bytes([
        *b.get(at)?,
        *b.get(at + 1)?,
    ])))
}

fn le24(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes([
        *b.get(at)?,
        *b.get(at + 1)?,
        *b.get(at + 2)?,
        0,
    ]))
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// The IHDR chunk is first: width and height at 16 and 20.
fn png(b: &[u8]) -> Option<(u32, u32)> {
    if b.get(12..16)? != b"IHDR" {
        return None;
    }
    Some((be32(b, 16)?, be32(b, 20)?))
}

/// The logical screen size at 6 and 8.
fn gif(b: &[u8]) -> Option<(u32, u32)> {
    Some((le16(b, 6)?, le16(b, 8)?))
}

/// Walks the segments to the first start-of-frame marker.
fn jpeg(b: &[u8]) -> Option<(u32, u32)> {
    let mut i = 2;
    loop {
        // Markers may be preceded by fill bytes (0xFF).
        while *b.get(i)? != 0xFF {
            i += 1;
        }
        while *b.get(i)? == 0xFF {
            i += 1;
        }
        let marker = *b.get(i)?;
        i += 1;
        match marker {
            // Standalone markers: no length.
            0x01 | 0xD0..=0xD7 => continue,
            0xD9 | 0xDA => return None,
            // SOF0..SOF15, except DHT (C4), JPG (C8) and DAC (CC).
            0xC0..=0xCF if !matches!(marker, 0xC4 | 0xC8 | 0xCC) => {
                let height = be16(b, i + 3)?;
                let width = be16(b, i + 5)?;
                return Some((width, height));
            }
            _ => {
                let len = usize::try_from(be16(b, i)?).ok()?;
                if len < 2 {
                    return None;
                }
                i += len;
            }
        }
    }
}

/// The first chunk: lossy (`VP8 `), lossless (`VP8L`) or extended (`VP8X`).
fn webp(b: &[u8]) -> Option<(u32, u32)> {
    match b.get(12..16)? {
        b"VP8 " => {
            if b.get(23..26)? != [0x9D, 0x01, 0x2A] {
                return None;
            }
            Some((le16(b, 26)? & 0x3FFF, le16(b, 28)? & 0x3FFF))
        }
        b"VP8L" => {
            if *b.get(20)? != 0x2F {
                return None;
            }
            let bits = u32::from_le_bytes(b.get(21..25)?.try_into().ok()?);
            Some(((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1))
        }
        b"VP8X" => Some((le24(b, 24)? + 1, le24(b, 27)? + 1)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_declare_types_case_insensitively() {
        assert_eq!(ImageType::from_path("/a/b.PNG"), Some(ImageType::Png));
        assert_eq!(ImageType::from_path("x.jpeg"), Some(ImageType::Jpeg));
        assert_eq!(ImageType::from_path("x.Jpg"), Some(ImageType::Jpeg));
        assert_eq!(ImageType::from_path("x.webp"), Some(ImageType::Webp));
        assert_eq!(ImageType::from_path("x.gif"), Some(ImageType::Gif));
        assert_eq!(ImageType::from_path("x.bmp"), None);
        assert_eq!(ImageType::from_path(".png"), None);
        assert_eq!(ImageType::from_path("dir.png/file"), None);
        assert_eq!(extension("/a/b.tar.gz"), Some(".gz"));
    }

    #[test]
    fn truncated_headers_have_no_dimensions() {
        assert_eq!(
            ImageType::Png.dimensions(b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\0"),
            None
        );
        assert_eq!(ImageType::Gif.dimensions(b"GIF89a\x01"), None);
        assert_eq!(
            ImageType::Jpeg.dimensions(&[0xFF, 0xD8, 0xFF, 0xE0, 0x00]),
            None
        );
        assert_eq!(ImageType::Webp.dimensions(b"RIFF\0\0\0\0WEBPVP8 "), None);
    }
}
