import fc from 'fast-check';
import { hasError, isStaticPix, parsePix } from 'pix-utils';
import { describe, expect, it } from 'vitest';
import {
  brCode,
  newTxid,
  parseBrCode,
  qrPng,
  type BrCodeFields,
} from '../../src/domain/pix/br-code.js';

/** The test's own CRC16-CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final xor). */
function crc16(text: string): string {
  let crc = 0xffff;
  for (const byte of Buffer.from(text, 'utf8')) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++)
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

/** An EMV field: 2-digit id, 2-digit length, value. */
const field = (id: string, value: string) =>
  `${id}${String(value.length).padStart(2, '0')}${value}`;

/** The top-level fields of a code, read by the test itself. */
function fieldsOf(code: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (let at = 0; at < code.length;) {
    const length = Number(code.slice(at + 2, at + 4));
    fields.set(code.slice(at, at + 2), code.slice(at + 4, at + 4 + length));
    at += 4 + length;
  }
  return fields;
}

const charge: BrCodeFields = {
  pixKey: '123e4567-e12b-12d1-a456-426655440000',
  merchantName: 'Financeira Exemplo',
  merchantCity: 'São Paulo',
  amount: 123_456,
  txid: 'chg7Hq2LmN4pR8sT1vW3xY5zA',
};

describe('Banco Central’s static example', () => {
  /**
   * Banco Central do Brasil, "Manual de Padrões para Iniciação do Pix", the static BR Code of its
   * examples: an EVP key, no amount, no txid (`***`), CRC `1D3D`.
   */
  const payload =
    '00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***6304';

  it('has the published CRC, by the test’s own CRC16-CCITT-FALSE', () => {
    expect(crc16('123456789')).toBe('29B1'); // the algorithm's standard check value
    expect(crc16(payload)).toBe('1D3D');
  });

  it('parses with the library, whose CRC check refuses a code one digit off', () => {
    const pix = parsePix(`${payload}1D3D`);
    if (hasError(pix)) throw new Error(pix.message);
    expect(isStaticPix(pix)).toBe(true);
    expect(pix).toMatchObject({
      pixKey: '123e4567-e12b-12d1-a456-426655440000',
      merchantName: 'Fulano de Tal',
      merchantCity: 'BRASILIA',
      txid: '***',
    });
    expect(parsePix(`${payload}1D3E`)).toMatchObject({ error: true, message: 'invalid crc' });
  });

  it('is refused by parseBrCode: a bad CRC, and a charge needs an amount and a txid', () => {
    expect(() => parseBrCode(`${payload}1D3E`)).toThrow(/invalid crc/);
    expect(() => parseBrCode(`${payload}1D3D`)).toThrow(/no amount/);
    const withAmount = payload.replace('5802BR', `${field('54', '10.00')}5802BR`);
    expect(() => parseBrCode(`${withAmount}${crc16(withAmount)}`)).toThrow(/no txid/);
  });
});

describe('brCode', () => {
  it('writes field 54 from the integer centavos, and 62-05 with the txid', () => {
    const cases: [number, string][] = [
      [1, '0.01'],
      [10, '0.10'],
      [100, '1.00'],
      [123_456, '1234.56'],
      [100_000_000_000, '1000000000.00'],
      [999_999_999_999, '9999999999.99'],
    ];
    for (const [amount, text] of cases) {
      const code = brCode({ ...charge, amount });
      expect(fieldsOf(code).get('54')).toBe(text);
      expect(fieldsOf(code).get('62')).toBe(field('05', charge.txid));
      expect(parseBrCode(code).amount).toBe(amount);
    }
  });

  it('strips accents, upper-cases and cuts names to the BR Code limits', () => {
    const code = brCode({
      ...charge,
      merchantName: '  Financeira  São João do Açaí Ltda ',
      merchantCity: 'São José dos Campos',
    });
    expect(parseBrCode(code)).toMatchObject({
      merchantName: 'FINANCEIRA SAO JOAO DO AC',
      merchantCity: 'SAO JOSE DOS CA',
    });
  });

  it('takes a key of 77 characters, the longest field 26 can hold', () => {
    const pixKey = `${'a'.repeat(65)}@example.com`;
    const code = brCode({ ...charge, pixKey });
    expect(fieldsOf(code).get('26')).toHaveLength(99);
    expect(parseBrCode(code).pixKey).toBe(pixKey);
  });

  const cpf = fc.stringMatching(/^\d{11}$/);
  const email = fc.emailAddress().filter((address) => address.length <= 77);
  const phone = fc.stringMatching(/^\+55[1-9]{2}9\d{8}$/);
  const evp = fc.uuid();
  const letters = [...'abcdefghijklmnopqrstuvwxyzáàâãéêíóôõúüçñßÁÀÂÃÉÊÍÓÔÕÚÇ0123456789 .-&'];
  const text = (maxLength: number) =>
    fc
      .string({ unit: fc.constantFrom(...letters), minLength: 1, maxLength })
      .filter((value) => /\S/.test(value));
  /** What the code should hold for a name: accents stripped, upper case, spaces collapsed. */
  const plain = (value: string) =>
    value.toUpperCase().normalize('NFD').replace(/\p{M}/gu, '').replace(/\s+/g, ' ').trim();

  it('issues codes that parse back to the same key, amount, txid and cut names', () => {
    fc.assert(
      fc.property(
        fc.oneof(cpf, email, phone, evp),
        text(60),
        text(40),
        fc.integer({ min: 1, max: 100_000_000_000 }),
        fc.stringMatching(/^[A-Za-z0-9]{1,25}$/),
        (pixKey, merchantName, merchantCity, amount, txid) => {
          const code = brCode({ pixKey, merchantName, merchantCity, amount, txid });
          expect(crc16(code.slice(0, -4))).toBe(code.slice(-4));
          const parsed = parseBrCode(code);
          expect(parsed).toMatchObject({ pixKey, amount, txid });
          expect(parsed.merchantName.length).toBeLessThanOrEqual(25);
          expect(parsed.merchantCity.length).toBeLessThanOrEqual(15);
          expect(parsed.merchantName).toMatch(/^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/);
          expect(plain(merchantName).startsWith(parsed.merchantName)).toBe(true);
          expect(plain(merchantCity).startsWith(parsed.merchantCity)).toBe(true);
          if (plain(merchantName).length <= 25)
            expect(parsed.merchantName).toBe(plain(merchantName));
        },
      ),
      { numRuns: 500 },
    );
  });

  it.each<[string, Partial<BrCodeFields>, RegExp]>([
    ['a zero amount', { amount: 0 }, /centavos/],
    ['a negative amount', { amount: -100 }, /centavos/],
    ['a fraction of a centavo', { amount: 10.5 }, /centavos/],
    ['NaN', { amount: Number.NaN }, /centavos/],
    ['an unsafe integer', { amount: 2 ** 53 }, /centavos/],
    ['an amount past field 54’s 13 characters', { amount: 1_000_000_000_000 }, /centavos/],
    ['an empty txid', { txid: '' }, /txid/],
    ['a 26-character txid', { txid: 'a'.repeat(26) }, /txid/],
    ['a txid with a dash', { txid: 'chg-123' }, /txid/],
    ['the “no txid” mark', { txid: '***' }, /txid/],
    ['an empty key', { pixKey: '' }, /Pix key/],
    ['a key with a space', { pixKey: 'fulano @example.com' }, /Pix key/],
    ['a key past 77 characters', { pixKey: `${'a'.repeat(66)}@example.com` }, /Pix key/],
    ['an empty name', { merchantName: '' }, /merchant name/],
    ['a name of spaces', { merchantName: '   ' }, /merchant name/],
    ['a name with nothing the code can hold', { merchantName: '日本' }, /merchant name/],
    ['an empty city', { merchantCity: '' }, /merchant city/],
  ])('refuses %s', (_, change, message) => {
    expect(() => brCode({ ...charge, ...change })).toThrow(message);
  });
});

describe('parseBrCode', () => {
  it('refuses what is not a static BR Code', () => {
    expect(() => parseBrCode('')).toThrow();
    expect(() => parseBrCode('not a pix code')).toThrow();
    const code = brCode(charge);
    expect(() => parseBrCode(code.slice(0, -1))).toThrow();
    expect(() => parseBrCode(`${code.slice(0, -4)}0000`)).toThrow(/invalid crc/);
    // A dynamic code: a payload URL instead of a key (built here; nothing is fetched).
    const account = field('00', 'br.gov.bcb.pix') + field('25', 'pix.example.com/qr/v2/abc');
    const dynamic = `000201010212${field('26', account)}52040000530398654041.005802BR5901A6001B62070503***6304`;
    expect(() => parseBrCode(`${dynamic}${crc16(dynamic)}`)).toThrow(/not a static/);
  });

  it('reads an amount written with fewer decimals exactly', () => {
    for (const [text, centavos] of [
      ['7', 700],
      ['7.5', 750],
      ['0.07', 7],
    ] as const) {
      const payload = brCode(charge)
        .slice(0, -4)
        .replace(field('54', '1234.56'), field('54', text));
      expect(parseBrCode(`${payload}${crc16(payload)}`).amount).toBe(centavos);
    }
  });
});

describe('newTxid', () => {
  it('draws 25 letters and digits, every one of the 62 in use', () => {
    const txids = Array.from({ length: 2000 }, newTxid);
    for (const txid of txids) expect(txid).toMatch(/^[A-Za-z0-9]{25}$/);
    expect(new Set(txids).size).toBe(txids.length);
    expect(new Set(txids.join('')).size).toBe(62);
  });
});

describe('qrPng', () => {
  it('renders a PNG of about 360 pixels', async () => {
    const png = await qrPng(brCode(charge));
    expect(png.subarray(0, 8)).toEqual(
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    );
    expect(png.subarray(12, 16).toString('latin1')).toBe('IHDR');
    expect(png.readUInt32BE(16)).toBe(360);
    expect(png.readUInt32BE(20)).toBe(360);
    expect(png.length).toBeGreaterThan(1000);
  });
});
