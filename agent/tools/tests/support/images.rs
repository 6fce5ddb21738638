//! Minimal but well-formed image headers of each format (no pixel data is needed: the tool
//! reads headers only). PNG chunks carry correct CRCs.

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn png_chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let mut body = kind.to_vec();
    body.extend_from_slice(data);
    out.extend_from_slice(&body);
    out.extend_from_slice(&crc32(&body).to_be_bytes());
}

pub fn png(w: u32, h: u32) -> Vec<u8> {
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&w.to_be_bytes());
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[8, 6, 0, 0, 0]);
    png_chunk(&mut out, b"IHDR", &ihdr);
    png_chunk(&mut out, b"IEND", &[]);
    out
}

pub fn gif(w: u16, h: u16) -> Vec<u8> {
    let mut out = b"GIF89a".to_vec();
    out.extend_from_slice(&w.to_le_bytes());
    out.extend_from_slice(&h.to_le_bytes());
    out.extend_from_slice(&[0, 0, 0, b';']);
    out
}

pub fn jpeg(w: u16, h: u16) -> Vec<u8> {
    let mut out = vec![0xFF, 0xD8];
    // APP0 (JFIF), 16 bytes.
    out.extend_from_slice(&[0xFF, 0xE0, 0x00, 0x10]);
    out.extend_from_slice(b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0");
    // SOF0: length 11, precision 8, height, width, 1 component.
    out.extend_from_slice(&[0xFF, 0xC0, 0x00, 0x0B, 0x08]);
    out.extend_from_slice(&h.to_be_bytes());
    out.extend_from_slice(&w.to_be_bytes());
    out.extend_from_slice(&[0x01, 0x01, 0x11, 0x00]);
    out.extend_from_slice(&[0xFF, 0xD9]);
    out
}

fn riff(chunk: &[u8; 4], payload: &[u8]) -> Vec<u8> {
    let mut body = b"WEBP".to_vec();
    body.extend_from_slice(chunk);
    body.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    body.extend_from_slice(payload);
    let mut out = b"RIFF".to_vec();
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(&body);
    out
}

/// Extended WebP (`VP8X`): canvas size minus one, 24-bit little endian.
pub fn webp_extended(w: u32, h: u32) -> Vec<u8> {
    let mut p = vec![0u8; 4];
    p.extend_from_slice(&(w - 1).to_le_bytes()[..3]);
    p.extend_from_slice(&(h - 1).to_le_bytes()[..3]);
    riff(b"VP8X", &p)
}

/// Lossless WebP (`VP8L`): signature 0x2F, then 14-bit width-1 and height-1.
pub fn webp_lossless(w: u32, h: u32) -> Vec<u8> {
    let bits = (w - 1) | ((h - 1) << 14);
    let mut p = vec![0x2F];
    p.extend_from_slice(&bits.to_le_bytes());
    riff(b"VP8L", &p)
}

/// Lossy WebP (`VP8 `): frame tag, start code, 14-bit width and height.
pub fn webp_lossy(w: u16, h: u16) -> Vec<u8> {
    let mut p = vec![0x10, 0x02, 0x00, 0x9D, 0x01, 0x2A];
    p.extend_from_slice(&w.to_le_bytes());
    p.extend_from_slice(&h.to_le_bytes());
    riff(b"VP8 ", &p)
}
