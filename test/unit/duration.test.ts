import { formatGoDuration, formatGoDurationNanos, goQuote, parseGoDuration, parseGoDurationNanos } from '../../src/core/duration.js';

const ns = 1n;
const us = 1_000n * ns;
const ms = 1_000n * us;
const s = 1_000n * ms;
const m = 60n * s;
const h = 60n * m;
const minInt64 = -(1n << 63n);
const maxInt64 = (1n << 63n) - 1n;

// Go's time package parseDurationTests (time_test.go), values in nanoseconds.
const goValidCases: ReadonlyArray<[string, bigint]> = [
  // simple
  ['0', 0n],
  ['5s', 5n * s],
  ['30s', 30n * s],
  ['1478s', 1478n * s],
  // sign
  ['-5s', -5n * s],
  ['+5s', 5n * s],
  ['-0', 0n],
  ['+0', 0n],
  // decimal
  ['5.0s', 5n * s],
  ['5.6s', 5n * s + 600n * ms],
  ['5.s', 5n * s],
  ['.5s', 500n * ms],
  ['1.0s', 1n * s],
  ['1.00s', 1n * s],
  ['1.004s', 1n * s + 4n * ms],
  ['1.0040s', 1n * s + 4n * ms],
  ['100.00100s', 100n * s + 1n * ms],
  // different units
  ['10ns', 10n * ns],
  ['11us', 11n * us],
  ['12\u00b5s', 12n * us], // U+00B5
  ['12\u03bcs', 12n * us], // U+03BC
  ['13ms', 13n * ms],
  ['14s', 14n * s],
  ['15m', 15n * m],
  ['16h', 16n * h],
  // composite durations
  ['3h30m', 3n * h + 30n * m],
  ['10.5s4m', 4n * m + 10n * s + 500n * ms],
  ['-2m3.4s', -(2n * m + 3n * s + 400n * ms)],
  ['1h2m3s4ms5us6ns', 1n * h + 2n * m + 3n * s + 4n * ms + 5n * us + 6n * ns],
  ['39h9m14.425s', 39n * h + 9n * m + 14n * s + 425n * ms],
  // large value
  ['52763797000ns', 52763797000n * ns],
  // more than 9 digits after decimal point (golang.org/issue/6617)
  ['0.3333333333333333333h', 20n * m],
  // 1<<53+1 cannot be stored precisely in a float64
  ['9007199254740993ns', (1n << 53n) + 1n],
  // largest duration that fits int64 nanoseconds
  ['9223372036854775807ns', maxInt64],
  ['9223372036854775.807us', maxInt64],
  ['9223372036s854ms775us807ns', maxInt64],
  ['-9223372036854775808ns', minInt64],
  ['-9223372036854775.808us', minInt64],
  ['-9223372036s854ms775us808ns', minInt64],
  // largest negative round trip value (golang.org/issue/48629)
  ['-2562047h47m16.854775808s', minInt64],
  // huge string (golang.org/issue/15011)
  ['0.100000000000000000000h', 6n * m],
  // first overflow check in leadingFraction
  ['0.830103483285477580700h', 49n * m + 48n * s + 372539827n * ns],
];

// Go's parseDurationErrorTests; Go checks that the message contains the quoted input.
// (Go's invalid-UTF-8 rows cannot be written as a JavaScript string; U+FFFD stands in.)
const goErrorCases: ReadonlyArray<[string, string]> = [
  ['', '""'],
  ['3', '"3"'],
  ['-', '"-"'],
  ['s', '"s"'],
  ['.', '"."'],
  ['-.', '"-."'],
  ['.s', '".s"'],
  ['+.s', '"+.s"'],
  ['1d', '"1d"'],
  ['\uFFFD', '"\\xef\\xbf\\xbd"'],
  ['\uFFFD hello \uFFFD world', '"\\xef\\xbf\\xbd hello \\xef\\xbf\\xbd world"'],
  // overflow
  ['9223372036854775810ns', '"9223372036854775810ns"'],
  ['9223372036854775808ns', '"9223372036854775808ns"'],
  ['-9223372036854775809ns', '"-9223372036854775809ns"'],
  ['9223372036854776us', '"9223372036854776us"'],
  ['3000000h', '"3000000h"'],
  ['9223372036854775.808us', '"9223372036854775.808us"'],
  ['9223372036854ms775us808ns', '"9223372036854ms775us808ns"'],
];

describe('parseGoDurationNanos', () => {
  it.each(goValidCases)('parses %j as Go does', (input, want) => {
    expect(parseGoDurationNanos(input)).toEqual({ ok: true, ns: want });
  });

  it.each(goErrorCases)('rejects %j with a message quoting it as %s', (input, quoted) => {
    const result = parseGoDurationNanos(input);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toContain(quoted);
  });
});

describe('parseGoDuration', () => {
  it.each<[string, number]>([
    ['24h', 86_400_000],
    ['1h30m', 5_400_000],
    ['90s', 90_000],
    ['1.5h', 5_400_000],
    ['300ms', 300],
    ['2h45m', 9_900_000],
    ['-1.5h', -5_400_000],
    ['1h15m30.918273645s', 4_530_918.273645],
    ['.5s', 500],
    ['5.s', 5_000],
    ['0', 0],
    ['0s', 0],
    ['1ns', 0.000001],
    ['1500us', 1.5],
  ])('parses %j to %d ms', (input, wantMs) => {
    const result = parseGoDuration(input);
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.ms).toBeCloseTo(wantMs, 9);
  });

  it.each<[string, string]>([
    ['', 'time: invalid duration ""'],
    ['x', 'time: invalid duration "x"'],
    ['1', 'time: missing unit in duration "1"'],
    ['1h2', 'time: missing unit in duration "1h2"'],
    ['1d', 'time: unknown unit "d" in duration "1d"'],
    ['1h1d', 'time: unknown unit "d" in duration "1h1d"'],
    ['1 h', 'time: unknown unit " h" in duration "1 h"'],
    ['.', 'time: invalid duration "."'],
    ['-.s', 'time: invalid duration "-.s"'],
    [' 24h', 'time: invalid duration " 24h"'],
    ['24h ', 'time: unknown unit "h " in duration "24h "'],
    ['1e3s', 'time: unknown unit "e" in duration "1e3s"'],
    ['--1s', 'time: invalid duration "--1s"'],
    ['3000000h', 'time: invalid duration "3000000h"'],
    ['1\u00e9', 'time: unknown unit "\\xc3\\xa9" in duration "1\\xc3\\xa9"'],
  ])('rejects %j with %s', (input, error) => {
    expect(parseGoDuration(input)).toEqual({ ok: false, error });
  });
});

describe('goQuote', () => {
  it.each<[string, string]>([
    ['24h', '"24h"'],
    ['a"b\\c', '"a\\"b\\\\c"'],
    ['tab\there', '"tab\\x09here"'],
    ['12\u00b5s', '"12\\xc2\\xb5s"'],
  ])('quotes %j as %s', (input, want) => {
    expect(goQuote(input)).toBe(want);
  });
});

describe('formatGoDurationNanos', () => {
  // Go's durationTests (time_test.go).
  it.each<[bigint, string]>([
    [0n, '0s'],
    [1n * ns, '1ns'],
    [1100n * ns, '1.1\u00b5s'],
    [2200n * us, '2.2ms'],
    [3300n * ms, '3.3s'],
    [4n * m + 5n * s, '4m5s'],
    [4n * m + 5001n * ms, '4m5.001s'],
    [5n * h + 6n * m + 7001n * ms, '5h6m7.001s'],
    [8n * m + 1n * ns, '8m0.000000001s'],
    [maxInt64, '2562047h47m16.854775807s'],
    [minInt64, '-2562047h47m16.854775808s'],
  ])('formats %d ns as %s', (input, want) => {
    expect(formatGoDurationNanos(input)).toBe(want);
  });

  it.each(goValidCases)('round-trips %j through String and ParseDuration', (_input, value) => {
    expect(parseGoDurationNanos(formatGoDurationNanos(value))).toEqual({ ok: true, ns: value });
  });
});

describe('formatGoDuration', () => {
  it.each<[number, string]>([
    [0, '0s'],
    [86_400_000, '24h0m0s'],
    [5_400_000, '1h30m0s'],
    [1.5, '1.5ms'],
    [-90_000, '-1m30s'],
    [0.000001, '1ns'],
  ])('formats %d ms as %s', (input, want) => {
    expect(formatGoDuration(input)).toBe(want);
  });
});
