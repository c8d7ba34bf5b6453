/**
 * A zip reader that trusts nothing the archive declares: entries are inflated one at a time, on demand,
 * with `maxOutputLength` set to what is left of the inflated-size budget, so a zip bomb stops at the
 * cap while inflating instead of after. OOXML and ODF parts are read through it; libraries that want a
 * whole archive (mammoth, exceljs) get `repack`'s stored copy of the parts already read, so they see
 * exactly the bytes that were counted and no parser differential between two zip readers can matter.
 */
import { crc32, inflateRawSync } from 'node:zlib';
import { documentError } from './failures';

interface Entry {
  name: string;
  method: number;
  flags: number;
  crc: number;
  compressedSize: number;
  size: number;
  localOffset: number;
}

export interface ZipBudget {
  /** Bytes that may still be inflated, shared by every read of one conversion. */
  remaining: number;
}

const EOCD = 0x06054b50;
const ZIP64_LOCATOR = 0x07064b50;
const ZIP64_EOCD = 0x06064b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

const unreadable = (reason: string, detail = 'The archive inside the document is corrupt or truncated.') => documentError('document_unreadable', reason, detail);

export class ZipArchive {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly bytes: Buffer,
    private readonly budget: ZipBudget,
    maxEntries: number,
  ) {
    for (const entry of readCentralDirectory(bytes, maxEntries)) {
      // A second entry of the same name is how parser differentials are made: refuse rather than pick one.
      if (this.entries.has(entry.name)) throw unreadable('zip_duplicate_entry', 'The archive names one part twice.');
      this.entries.set(entry.name, entry);
    }
  }

  get names(): string[] {
    return [...this.entries.keys()];
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  /** The inflated bytes of one entry, or undefined when there is none of that name. */
  read(name: string): Buffer | undefined {
    const entry = this.entries.get(name);
    if (!entry) return undefined;
    if (entry.flags & 1) throw documentError('document_encrypted', 'zip_encrypted', 'The document is encrypted.');
    const data = this.rawData(entry);
    let out: Buffer;
    if (entry.method === 0) {
      if (data.length > this.budget.remaining) throw tooLarge();
      out = data;
    } else if (entry.method === 8) {
      try {
        out = inflateRawSync(data, { maxOutputLength: Math.max(1, this.budget.remaining) });
      } catch (error) {
        if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge();
        throw unreadable('zip_inflate');
      }
      if (out.length > this.budget.remaining) throw tooLarge();
    } else {
      throw documentError('document_unsupported', 'zip_method', `The archive uses compression method ${entry.method}, which the service does not read.`);
    }
    if ((crc32(out) >>> 0) !== entry.crc) throw unreadable('zip_crc');
    this.budget.remaining -= out.length;
    return out;
  }

  /** An entry as UTF-8 text (BOM dropped), or undefined. */
  text(name: string): string | undefined {
    const data = this.read(name);
    if (!data) return undefined;
    const text = data.toString('utf8');
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  }

  private rawData(entry: Entry): Buffer {
    const at = entry.localOffset;
    if (at + 30 > this.bytes.length || this.bytes.readUInt32LE(at) !== LOCAL) throw unreadable('zip_local_header');
    const start = at + 30 + this.bytes.readUInt16LE(at + 26) + this.bytes.readUInt16LE(at + 28);
    const end = start + entry.compressedSize;
    if (end > this.bytes.length) throw unreadable('zip_truncated');
    return this.bytes.subarray(start, end);
  }
}

const tooLarge = () => documentError('document_too_large', 'zip_inflated_size', 'The document inflates to more than the service accepts.');

function findEocd(bytes: Buffer): number {
  // The end record is 22 bytes plus a comment of at most 65,535.
  const lowest = Math.max(0, bytes.length - 22 - 0xffff);
  for (let at = bytes.length - 22; at >= lowest; at--) {
    if (bytes.readUInt32LE(at) === EOCD) return at;
  }
  throw unreadable('zip_no_end_record');
}

function readCentralDirectory(bytes: Buffer, maxEntries: number): Entry[] {
  if (bytes.length < 22) throw unreadable('zip_truncated');
  const eocd = findEocd(bytes);
  let count = bytes.readUInt16LE(eocd + 10);
  let offset = bytes.readUInt32LE(eocd + 16);
  if (count === 0xffff || offset === 0xffffffff) {
    const locator = eocd - 20;
    if (locator < 0 || bytes.readUInt32LE(locator) !== ZIP64_LOCATOR) throw unreadable('zip64_locator');
    const record = safeNumber(bytes.readBigUInt64LE(locator + 8));
    if (record + 56 > bytes.length || bytes.readUInt32LE(record) !== ZIP64_EOCD) throw unreadable('zip64_end_record');
    count = safeNumber(bytes.readBigUInt64LE(record + 32));
    offset = safeNumber(bytes.readBigUInt64LE(record + 48));
  }
  if (count > maxEntries) throw documentError('document_too_large', 'zip_entries', `The archive has more than ${maxEntries} parts.`);
  const entries: Entry[] = [];
  let at = offset;
  for (let i = 0; i < count; i++) {
    if (at + 46 > bytes.length || bytes.readUInt32LE(at) !== CENTRAL) throw unreadable('zip_central_directory');
    const nameLength = bytes.readUInt16LE(at + 28);
    const extraLength = bytes.readUInt16LE(at + 30);
    const commentLength = bytes.readUInt16LE(at + 32);
    if (at + 46 + nameLength + extraLength > bytes.length) throw unreadable('zip_central_directory');
    const entry: Entry = {
      name: bytes.toString('utf8', at + 46, at + 46 + nameLength),
      flags: bytes.readUInt16LE(at + 8),
      method: bytes.readUInt16LE(at + 10),
      crc: bytes.readUInt32LE(at + 16),
      compressedSize: bytes.readUInt32LE(at + 20),
      size: bytes.readUInt32LE(at + 24),
      localOffset: bytes.readUInt32LE(at + 42),
    };
    applyZip64(entry, bytes.subarray(at + 46 + nameLength, at + 46 + nameLength + extraLength));
    entries.push(entry);
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

/** Sizes and offsets too big for 32 bits live in the zip64 extra field, in this order, only when saturated. */
function applyZip64(entry: Entry, extra: Buffer): void {
  for (let at = 0; at + 4 <= extra.length; ) {
    const id = extra.readUInt16LE(at);
    const size = extra.readUInt16LE(at + 2);
    if (id === 1) {
      let field = at + 4;
      const next = (): number => {
        if (field + 8 > at + 4 + size || field + 8 > extra.length) throw unreadable('zip64_extra');
        const value = safeNumber(extra.readBigUInt64LE(field));
        field += 8;
        return value;
      };
      if (entry.size === 0xffffffff) entry.size = next();
      if (entry.compressedSize === 0xffffffff) entry.compressedSize = next();
      if (entry.localOffset === 0xffffffff) entry.localOffset = next();
      return;
    }
    at += 4 + size;
  }
}

function safeNumber(value: bigint): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw unreadable('zip64_size');
  return Number(value);
}

/** A stored (uncompressed) zip of the given parts, for libraries that open a whole archive themselves. */
export function repack(parts: ReadonlyArray<{ name: string; data: Buffer }>): Buffer {
  const chunks: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const { name, data } of parts) {
    const nameBytes = Buffer.from(name, 'utf8');
    const crc = crc32(data) >>> 0;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(LOCAL, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6); // names are UTF-8
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const header = Buffer.alloc(46);
    header.writeUInt32LE(CENTRAL, 0);
    header.writeUInt16LE(20, 4);
    header.writeUInt16LE(20, 6);
    header.writeUInt16LE(0x0800, 8);
    header.writeUInt32LE(crc, 16);
    header.writeUInt32LE(data.length, 20);
    header.writeUInt32LE(data.length, 24);
    header.writeUInt16LE(nameBytes.length, 28);
    header.writeUInt32LE(offset, 42);
    chunks.push(local, nameBytes, data);
    central.push(header, nameBytes);
    offset += 30 + nameBytes.length + data.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(EOCD, 0);
  end.writeUInt16LE(parts.length, 8);
  end.writeUInt16LE(parts.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...chunks, directory, end]);
}
