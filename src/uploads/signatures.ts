/**
 * Format detection off Node, from the file's first bytes: the formats the upload endpoints accept
 * (spec "Limits") and a few common ones they refuse, in file-type's names. file-type itself stays on
 * Node: its tokenizer pulls in Node-only packages and would be most of a Worker bundle. A format it
 * knows and this does not is refused off Node as "matches no known format".
 */
import type { DetectedType } from './formats.js';
import { SAMPLE_BYTES, wanted } from './sniff.js';

const ascii = (bytes: Uint8Array, at: number, text: string) => {
  for (let i = 0; i < text.length; i++) if (bytes[at + i] !== text.charCodeAt(i)) return false;
  return true;
};

const found = (ext: string, mime: string): DetectedType => ({ ext, mime });

/** The ID3v2 tag's whole length (header and body), or 0 when `bytes` do not start with one. */
function id3Length(bytes: Uint8Array): number {
  if (bytes.length < 10 || !ascii(bytes, 0, 'ID3')) return 0;
  const size =
    ((bytes[6]! & 0x7f) << 21) | ((bytes[7]! & 0x7f) << 14) | ((bytes[8]! & 0x7f) << 7) | (bytes[9]! & 0x7f);
  return 10 + size;
}

/** The ISO base media family by its `ftyp` brand, as file-type names it. */
function isoBrand(brand: string): DetectedType {
  if (brand === 'qt  ') return found('mov', 'video/quicktime');
  if (brand.startsWith('3g2')) return found('3g2', 'video/3gpp2');
  if (brand.startsWith('3g')) return found('3gp', 'video/3gpp');
  if (brand.startsWith('M4A')) return found('m4a', 'audio/x-m4a');
  if (brand.startsWith('M4V')) return found('m4v', 'video/x-m4v');
  if (brand === 'avif' || brand === 'avis') return found('avif', 'image/avif');
  if (['heic', 'heix', 'mif1', 'msf1', 'hevc', 'hevx'].includes(brand)) return found('heic', 'image/heic');
  return found('mp4', 'video/mp4');
}

/** What the first bytes of a file are, or `undefined` when they match none of the known signatures. */
function detectSignature(bytes: Uint8Array): DetectedType | undefined {
  const tag = id3Length(bytes);
  if (tag > 0) {
    // An ID3 tag leads an MP3 (or ADTS AAC); what follows it decides, else it is taken as MP3.
    return detectSignature(bytes.subarray(tag)) ?? found('mp3', 'audio/mpeg');
  }
  if (bytes.length < 4) return undefined;
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return found('jpg', 'image/jpeg');
  if (bytes[0] === 0x89 && ascii(bytes, 1, 'PNG\r\n\x1a\n')) return found('png', 'image/png');
  if (ascii(bytes, 0, 'RIFF')) {
    if (ascii(bytes, 8, 'WEBP')) return found('webp', 'image/webp');
    if (ascii(bytes, 8, 'AVI ')) return found('avi', 'video/vnd.avi');
    if (ascii(bytes, 8, 'WAVE')) return found('wav', 'audio/wav');
  }
  if (ascii(bytes, 0, 'OggS')) return found('ogg', 'audio/ogg');
  if (bytes[0] === 0x1a && bytes[1] === 0x45 && bytes[2] === 0xdf && bytes[3] === 0xa3) {
    // EBML: the DocType says which (it comes within the header's first bytes).
    const head = new TextDecoder('latin1').decode(bytes.subarray(0, 64));
    if (head.includes('webm')) return found('webm', 'video/webm');
    if (head.includes('matroska')) return found('mkv', 'video/matroska');
    return undefined;
  }
  if (bytes.length >= 12 && ascii(bytes, 4, 'ftyp')) {
    return isoBrand(new TextDecoder('latin1').decode(bytes.subarray(8, 12)));
  }
  if (['moov', 'mdat', 'wide', 'free'].some((atom) => ascii(bytes, 4, atom))) {
    return found('mov', 'video/quicktime');
  }
  if (bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xf6) === 0xf0) return found('aac', 'audio/aac');
  if (bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe6) === 0xe2) return found('mp3', 'audio/mpeg');
  if (ascii(bytes, 0, 'GIF8')) return found('gif', 'image/gif');
  if (ascii(bytes, 0, '%PDF')) return found('pdf', 'application/pdf');
  if (ascii(bytes, 0, 'fLaC')) return found('flac', 'audio/flac');
  if (ascii(bytes, 0, 'PK\x03\x04')) return found('zip', 'application/zip');
  return undefined;
}

/** The bytes' format off Node: of bytes in memory, or of a Blob's first bytes (past an ID3 tag). */
export async function detectWeb(sample: Uint8Array | Blob): Promise<DetectedType | undefined> {
  if (sample instanceof Uint8Array) return detectSignature(sample);
  const read = async (end: number) => new Uint8Array(await sample.slice(0, end).arrayBuffer());
  const head = await read(SAMPLE_BYTES);
  const want = wanted(head);
  return detectSignature(want > head.length && sample.size > head.length ? await read(want) : head);
}
