/**
 * An XLSX file (a zip) with its entries' modification times zeroed, so that two writes of the same workbook compare
 * equal byte for byte: write-excel-file stamps every entry with the time it writes (DOS time and date, 2 s steps).
 * Read through the central directory (PKWARE APPNOTE 4.3.12, 4.3.16): each entry's time and date there and in its
 * local header.
 */
export function withoutZipTimes(bytes: Uint8Array): Buffer {
  const b = Buffer.from(bytes);
  let eocd = -1;
  for (let i = b.length - 22; i >= Math.max(0, b.length - 22 - 65_535); i--) {
    if (b.readUInt32LE(i) === 0x06054b50) { eocd = i; break; }
  }
  if (eocd < 0) throw new Error('not a zip: no end of central directory');
  const entries = b.readUInt16LE(eocd + 10);
  let at = b.readUInt32LE(eocd + 16);
  for (let n = 0; n < entries; n++) {
    if (b.readUInt32LE(at) !== 0x02014b50) throw new Error(`not a central directory entry at ${at}`);
    b.writeUInt32LE(0, at + 12); // time and date
    const local = b.readUInt32LE(at + 42);
    if (b.readUInt32LE(local) !== 0x04034b50) throw new Error(`not a local header at ${local}`);
    b.writeUInt32LE(0, local + 10);
    at += 46 + b.readUInt16LE(at + 28) + b.readUInt16LE(at + 30) + b.readUInt16LE(at + 32);
  }
  return b;
}
