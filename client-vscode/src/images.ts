/**
 * Images sent with a message (protocol 1.2, §9): the four types the server takes and its 5 MiB limit, checked
 * before sending so the user learns at once why an image cannot go (the server refuses the same with -32602).
 * Pure: shared by the webview (paste, drop) and the extension (the attach command).
 */
import { type ChatImage, IMAGE_TYPES, type ImageType, MAX_IMAGE_BYTES } from './protocol';

/** An image waiting in the composer: what is sent, with the name and size the thumbnail shows. */
export interface Attachment extends ChatImage { name: string; bytes: number }

/** The type of a file name's extension, for a file whose type the browser or the file system did not give. */
export function typeOfName(name: string): string {
  const ext = /\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase();
  return ({ png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp' } as Record<string, string>)[ext ?? ''] ?? '';
}

export function isImageType(type: string): type is ImageType {
  return (IMAGE_TYPES as readonly string[]).includes(type);
}

/** Why an image cannot be sent (a sentence naming it), or undefined when it can. */
export function imageProblem(name: string, type: string, bytes: number): string | undefined {
  if (!isImageType(type)) {
    return `${name} cannot be sent: it is ${type ? `of type ${type}` : 'not an image the panel recognises'}; `
      + 'the agent takes PNG, JPEG, GIF and WebP images.';
  }
  if (bytes > MAX_IMAGE_BYTES) {
    return `${name} cannot be sent: it is ${mib(bytes)} (${bytes.toLocaleString('en')} bytes); the agent takes images of at most 5 MiB.`;
  }
  return undefined;
}

/** The decoded size of base64 text. */
export function decodedBytes(base64: string): number {
  const pad = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
  return Math.floor((base64.length * 3) / 4) - pad;
}

/** `1.2 MiB`, `340 KiB`, `12 bytes`. */
export function mib(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KiB`;
  return `${bytes} bytes`;
}
