/**
 * Signing secrets at rest: AES-256-GCM under the server key (`SECRETS_KEY`), so a copy of the database
 * alone does not let anyone sign deliveries. The account id is bound in as associated data: a sealed
 * secret moved to another account's record does not open.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 'v1';

export interface SecretBox {
  seal(plaintext: Buffer, context: string): string;
  open(sealed: string, context: string): Buffer;
}

/** `serverKey`: 32 bytes, base64 (validated by the config module). */
export function createSecretBox(serverKey: string): SecretBox {
  const key = Buffer.from(serverKey, 'base64');
  if (key.length !== 32) throw new Error('SECRETS_KEY must be 32 bytes, base64-encoded');
  return {
    seal(plaintext, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(context));
      const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
      return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
    },
    open(sealed, context) {
      const [version, payload] = sealed.split(':');
      if (version !== VERSION || !payload) throw new Error('unknown sealed secret format');
      const bytes = Buffer.from(payload, 'base64');
      const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12));
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(bytes.subarray(12, 28));
      return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]);
    },
  };
}
