// The example's own Content Credentials signer (docs/provenance.md "Making a CA and a signing
// certificate"): a CA and an end-entity signing certificate it issues, made in memory at each start with
// node:crypto alone (P-256 keys, the certificates written as DER by hand). C2PA refuses self-signed
// signing certificates, so the signer is issued by the CA: key usage digitalSignature, extended key
// usage emailProtection, not a CA; the CA is the example's trust anchor. A production host makes these
// once, keeps the CA key offline, and reads the PEM files instead.
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

export interface ExampleSigner {
  /** The CA's certificate, PEM: the trust anchor. */
  caPem: string;
  /** The signing certificate followed by the CA, PEM. */
  chainPem: string;
  /** The signing key. */
  privateKey: KeyObject;
}

function tlv(tag: number, content: Buffer): Buffer {
  const length = content.length;
  if (length < 0x80) return Buffer.concat([Buffer.from([tag, length]), content]);
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest >>= 8) bytes.unshift(rest & 0xff);
  return Buffer.concat([Buffer.from([tag, 0x80 | bytes.length, ...bytes]), content]);
}

const seq = (...items: Buffer[]): Buffer => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]): Buffer => tlv(0x31, Buffer.concat(items));
const octets = (bytes: Buffer): Buffer => tlv(0x04, bytes);
const bits = (bytes: Buffer, unused = 0): Buffer => tlv(0x03, Buffer.concat([Buffer.from([unused]), bytes]));
const utf8 = (text: string): Buffer => tlv(0x0c, Buffer.from(text, 'utf8'));
const TRUE = Buffer.from([0x01, 0x01, 0xff]);

function integer(bytes: Buffer): Buffer {
  return tlv(0x02, bytes[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);
}

function oid(dotted: string): Buffer {
  const [first, second, ...rest] = dotted.split('.').map(Number);
  const out = [first! * 40 + second!];
  for (const arc of rest) {
    const chunk = [arc & 0x7f];
    for (let value = arc >> 7; value > 0; value >>= 7) chunk.unshift((value & 0x7f) | 0x80);
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

function time(date: Date): Buffer {
  const text = date.toISOString().replace(/[-:T]/g, '').slice(2, 14) + 'Z';
  return tlv(0x17, Buffer.from(text, 'ascii'));
}

const name = (organization: string, commonName: string): Buffer => seq(set(seq(oid('2.5.4.10'), utf8(organization))), set(seq(oid('2.5.4.3'), utf8(commonName))));
const extension = (id: string, critical: boolean, value: Buffer): Buffer => seq(oid(id), ...(critical ? [TRUE] : []), octets(value));
const ECDSA_SHA256 = seq(oid('1.2.840.10045.4.3.2'));

interface Issued {
  der: Buffer;
  keyId: Buffer;
}

function certificate(options: { subject: Buffer; issuer: Buffer; publicKey: KeyObject; signingKey: KeyObject; issuerKeyId?: Buffer; ca: boolean; days: number }): Issued {
  const spki = options.publicKey.export({ type: 'spki', format: 'der' });
  const keyId = createHash('sha1').update(spki).digest();
  const now = Date.now();
  const extensions = [
    extension('2.5.29.19', true, options.ca ? seq(TRUE) : seq()),
    // keyCertSign + cRLSign for the CA; digitalSignature for the signer
    extension('2.5.29.15', true, options.ca ? bits(Buffer.from([0x06]), 1) : bits(Buffer.from([0x80]), 7)),
    ...(options.ca ? [] : [extension('2.5.29.37', false, seq(oid('1.3.6.1.5.5.7.3.4')))]),
    extension('2.5.29.14', false, octets(keyId)),
    ...(options.issuerKeyId ? [extension('2.5.29.35', false, seq(tlv(0x80, options.issuerKeyId)))] : []),
  ];
  const tbs = seq(
    tlv(0xa0, integer(Buffer.from([2]))),
    integer(randomBytes(16)),
    ECDSA_SHA256,
    options.issuer,
    seq(time(new Date(now - 3_600_000)), time(new Date(now + options.days * 86_400_000))),
    options.subject,
    spki,
    tlv(0xa3, seq(...extensions)),
  );
  const signature = sign('sha256', tbs, options.signingKey);
  return { der: seq(tbs, ECDSA_SHA256, bits(signature)), keyId };
}

const pem = (der: Buffer): string => `-----BEGIN CERTIFICATE-----\n${der.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`;

/** A fresh CA and the signing certificate it issued (es256), for one run of the example. */
export function makeExampleSigner(organization = 'Image gateway example'): ExampleSigner {
  const ca = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const signer = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const caName = name(organization, `${organization} C2PA CA`);
  const caCert = certificate({ subject: caName, issuer: caName, publicKey: ca.publicKey, signingKey: ca.privateKey, ca: true, days: 3650 });
  const signerCert = certificate({
    subject: name(organization, `${organization} signer`),
    issuer: caName,
    publicKey: signer.publicKey,
    signingKey: ca.privateKey,
    issuerKeyId: caCert.keyId,
    ca: false,
    days: 365,
  });
  return { caPem: pem(caCert.der), chainPem: pem(signerCert.der) + pem(caCert.der), privateKey: signer.privateKey };
}
