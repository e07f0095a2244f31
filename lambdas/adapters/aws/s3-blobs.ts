/**
 * {@link BlobStore} on Amazon S3 (results and screenshots), plus presigned GET URLs so that large
 * results and images can be handed to clients without passing through Lambda.
 */
import { DeleteObjectCommand, GetObjectCommand, NoSuchKey, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { BlobStore } from '../../core/ports.ts';

export interface S3BlobStoreOptions {
  bucket: string;
  client?: S3Client;
}

export class S3BlobStore implements BlobStore {
  readonly bucket: string;
  private readonly client: S3Client;

  constructor(o: S3BlobStoreOptions) {
    this.bucket = o.bucket;
    this.client = o.client ?? new S3Client({});
  }

  async put(key: string, body: Uint8Array | string, contentType: string): Promise<void> {
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentType: contentType }));
  }

  async get(key: string): Promise<Buffer | null> {
    try {
      const r = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return r.Body ? Buffer.from(await r.Body.transformToByteArray()) : Buffer.alloc(0);
    } catch (err) {
      if (err instanceof NoSuchKey || (err as { name?: string }).name === 'NoSuchKey') return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  /**
   * A presigned GET URL for a stored object.
   * @param expiresInSeconds how long the URL works (default 900 s; S3 allows up to 7 days).
   */
  presignGet(key: string, expiresInSeconds = 900): Promise<string> {
    return getSignedUrl(this.client, new GetObjectCommand({ Bucket: this.bucket, Key: key }), { expiresIn: expiresInSeconds });
  }
}
