/**
 * Go's time.ParseDuration and Duration.String, byte for byte.
 *
 * Smith reads the deletionDelay annotation with Go's parser, so a value that
 * Smith accepted must mean the same here and a value Smith rejected must be
 * rejected here too. The parser therefore mirrors Go's algorithm rather than
 * a regular expression: it works on the UTF-8 bytes of the input, counts in
 * int64 nanoseconds (as BigInt) with Go's overflow checks, and builds the
 * same error messages, including Go's quoting of non-ASCII bytes.
 */

export interface GoDurationError {
  ok: false;
  /** Go's own message, e.g. `time: unknown unit "d" in duration "1d"`. */
  error: string;
}
export type GoDurationResult = { ok: true; ms: number } | GoDurationError;
export type GoDurationNanosResult = { ok: true; ns: bigint } | GoDurationError;

const NANOS_PER_MS = 1_000_000n;

/** 1<<63: Go accumulates the magnitude as uint64 and allows exactly this much for negative values. */
const MAGNITUDE_LIMIT = 1n << 63n;
const MAX_INT64 = MAGNITUDE_LIMIT - 1n;

/** Go's unitMap, keyed by the unit's UTF-8 spelling. */
const UNIT_NANOS: ReadonlyMap<string, bigint> = new Map([
  ['ns', 1n],
  ['us', 1_000n],
  ['\u00b5s', 1_000n], // U+00B5 micro sign
  ['\u03bcs', 1_000n], // U+03BC Greek small letter mu
  ['ms', 1_000_000n],
  ['s', 1_000_000_000n],
  ['m', 60_000_000_000n],
  ['h', 3_600_000_000_000n],
]);

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: false });

const DOT = 0x2e;
const PLUS = 0x2b;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;

function isDigit(byte: number): boolean {
  return byte >= ZERO && byte <= NINE;
}

/**
 * Go's time.quote: ASCII printable characters as they are (with `"` and `\`
 * escaped), every byte of anything else as `\xNN`.
 */
export function goQuote(text: string): string {
  let quoted = '"';
  for (const char of text) {
    const codePoint = char.codePointAt(0) ?? 0;
    if (codePoint < 0x20 || codePoint >= 0x80) {
      for (const byte of utf8Encoder.encode(char)) {
        quoted += `\\x${byte.toString(16).padStart(2, '0')}`;
      }
    } else {
      if (char === '"' || char === '\\') quoted += '\\';
      quoted += char;
    }
  }
  return `${quoted}"`;
}

function invalid(text: string): GoDurationError {
  return { ok: false, error: `time: invalid duration ${goQuote(text)}` };
}

/** Go's leadingInt: digits as an integer, or undefined on overflow past 1<<63. */
function leadingInt(bytes: Uint8Array, start: number): { value: bigint; end: number } | undefined {
  let value = 0n;
  let index = start;
  for (; index < bytes.length; index++) {
    const byte = bytes[index] ?? 0;
    if (!isDigit(byte)) break;
    if (value > MAGNITUDE_LIMIT / 10n) return undefined;
    value = value * 10n + BigInt(byte - ZERO);
    if (value > MAGNITUDE_LIMIT) return undefined;
  }
  return { value, end: index };
}

/**
 * Go's leadingFraction: digits after the point as an integer and its scale.
 * On overflow it stops gaining precision instead of failing, as Go does, so
 * "0.100000000000000000000h" is fine.
 */
function leadingFraction(bytes: Uint8Array, start: number): { value: bigint; scale: number; end: number } {
  let value = 0n;
  let scale = 1;
  let overflowed = false;
  let index = start;
  for (; index < bytes.length; index++) {
    const byte = bytes[index] ?? 0;
    if (!isDigit(byte)) break;
    if (overflowed) continue;
    if (value > MAX_INT64 / 10n) {
      overflowed = true;
      continue;
    }
    const next = value * 10n + BigInt(byte - ZERO);
    if (next > MAGNITUDE_LIMIT) {
      overflowed = true;
      continue;
    }
    value = next;
    scale *= 10;
  }
  return { value, scale, end: index };
}

/** Parses a Go duration to nanoseconds, exactly as time.ParseDuration does. */
export function parseGoDurationNanos(text: string): GoDurationNanosResult {
  const bytes = utf8Encoder.encode(text);
  let index = 0;
  let negative = false;
  let total = 0n;

  if (bytes.length > 0 && (bytes[0] === MINUS || bytes[0] === PLUS)) {
    negative = bytes[0] === MINUS;
    index = 1;
  }
  // Go's special case: a bare "0" (after the sign) needs no unit.
  if (bytes.length - index === 1 && bytes[index] === ZERO) return { ok: true, ns: 0n };
  if (index === bytes.length) return invalid(text);

  while (index < bytes.length) {
    const first = bytes[index] ?? 0;
    if (!(first === DOT || isDigit(first))) return invalid(text);

    const integer = leadingInt(bytes, index);
    if (integer === undefined) return invalid(text);
    const consumedInteger = integer.end !== index;
    index = integer.end;

    let fraction = 0n;
    let scale = 1;
    let consumedFraction = false;
    if (index < bytes.length && bytes[index] === DOT) {
      index++;
      const parsed = leadingFraction(bytes, index);
      consumedFraction = parsed.end !== index;
      fraction = parsed.value;
      scale = parsed.scale;
      index = parsed.end;
    }
    // No digits on either side of the point: ".s", "-.s".
    if (!consumedInteger && !consumedFraction) return invalid(text);

    const unitStart = index;
    while (index < bytes.length) {
      const byte = bytes[index] ?? 0;
      if (byte === DOT || isDigit(byte)) break;
      index++;
    }
    if (index === unitStart) return { ok: false, error: `time: missing unit in duration ${goQuote(text)}` };
    const unitText = utf8Decoder.decode(bytes.subarray(unitStart, index));
    const unitNanos = UNIT_NANOS.get(unitText);
    if (unitNanos === undefined) {
      return { ok: false, error: `time: unknown unit ${goQuote(unitText)} in duration ${goQuote(text)}` };
    }

    let value = integer.value;
    if (value > MAGNITUDE_LIMIT / unitNanos) return invalid(text);
    value *= unitNanos;
    if (fraction > 0n) {
      // Go computes the fractional part in float64 (nanosecond-accurate even
      // for fractions of hours) and truncates; Number() rounds like Go's conversion.
      value += BigInt(Math.trunc(Number(fraction) * (Number(unitNanos) / scale)));
      if (value > MAGNITUDE_LIMIT) return invalid(text);
    }
    total += value;
    if (total > MAGNITUDE_LIMIT) return invalid(text);
  }

  if (negative) return { ok: true, ns: -total };
  if (total > MAX_INT64) return invalid(text);
  return { ok: true, ns: total };
}

/**
 * Parses a Go duration ("24h", "1h30m", "-1.5h", ".5s", "0") to milliseconds.
 * Sub-millisecond parts are kept as a fraction.
 */
export function parseGoDuration(text: string): GoDurationResult {
  const parsed = parseGoDurationNanos(text);
  if (!parsed.ok) return parsed;
  // Split before converting so whole milliseconds stay exact as far as a double allows.
  const wholeMs = parsed.ns / NANOS_PER_MS;
  const remainderNs = parsed.ns % NANOS_PER_MS;
  return { ok: true, ms: Number(wholeMs) + Number(remainderNs) / 1e6 };
}

/** Go's fmtFrac: the fraction of v below `precision` digits, trailing zeros dropped. */
function formatFraction(value: bigint, precision: number): { text: string; rest: bigint } {
  let digits = '';
  let printed = false;
  let rest = value;
  for (let i = 0; i < precision; i++) {
    const digit = rest % 10n;
    printed = printed || digit !== 0n;
    if (printed) digits = digit.toString() + digits;
    rest /= 10n;
  }
  return { text: printed ? `.${digits}` : '', rest };
}

/** Go's Duration.String for a nanosecond count: "72h3m0.5s", "1.5µs", "0s". */
export function formatGoDurationNanos(ns: bigint): string {
  if (ns === 0n) return '0s';
  const negative = ns < 0n;
  let magnitude = negative ? -ns : ns;
  let text: string;
  if (magnitude < 1_000_000_000n) {
    // Under a second: the largest unit that keeps a non-zero leading digit.
    let precision: number;
    let unit: string;
    if (magnitude < 1_000n) {
      precision = 0;
      unit = 'ns';
    } else if (magnitude < 1_000_000n) {
      precision = 3;
      unit = '\u00b5s';
    } else {
      precision = 6;
      unit = 'ms';
    }
    const { text: fraction, rest } = formatFraction(magnitude, precision);
    text = `${rest.toString()}${fraction}${unit}`;
  } else {
    const { text: fraction, rest } = formatFraction(magnitude, 9);
    magnitude = rest;
    text = `${(magnitude % 60n).toString()}${fraction}s`;
    magnitude /= 60n;
    if (magnitude > 0n) {
      text = `${(magnitude % 60n).toString()}m${text}`;
      magnitude /= 60n;
      if (magnitude > 0n) text = `${magnitude.toString()}h${text}`;
    }
  }
  return negative ? `-${text}` : text;
}

/**
 * Go's Duration.String for milliseconds, for messages: formatGoDuration(5_400_000) is "1h30m0s".
 * The value is rounded to whole nanoseconds first.
 */
export function formatGoDuration(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  const whole = Math.trunc(ms);
  const ns = BigInt(whole) * NANOS_PER_MS + BigInt(Math.round((ms - whole) * 1e6));
  return formatGoDurationNanos(ns);
}

/** Time left, to the second: "in 3m12s", or "overdue by 4s" once past. */
export function formatRemaining(remainingMs: number): string {
  const ms = Math.round(remainingMs / 1000) * 1000;
  return ms >= 0 ? `in ${formatGoDuration(ms)}` : `overdue by ${formatGoDuration(-ms)}`;
}
