/** The upload types KYC accepts, recognised by their first bytes, never by name or declared type. */
export const acceptedFileTypes = ['application/pdf', 'image/jpeg', 'image/png'] as const;
export type AcceptedFileType = (typeof acceptedFileTypes)[number];

const signatures: [AcceptedFileType, number[]][] = [
  ['application/pdf', [0x25, 0x50, 0x44, 0x46, 0x2d]], // %PDF-
  ['image/png', [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]],
  ['image/jpeg', [0xff, 0xd8, 0xff]],
];

export function sniffFileType(bytes: Uint8Array): AcceptedFileType | undefined {
  return signatures.find(([, magic]) => magic.every((byte, i) => bytes[i] === byte))?.[0];
}
