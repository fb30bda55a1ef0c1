import { describe, expect, it } from 'vitest';
import { decodedBytes, imageProblem, mib, typeOfName } from './images';

describe('images', () => {
  it('takes the four types up to 5 MiB decoded, and names the file and the reason otherwise', () => {
    expect(['image/png', 'image/jpeg', 'image/gif', 'image/webp'].map((t) => imageProblem('a', t, 5 * 1024 * 1024))).toEqual(
      [undefined, undefined, undefined, undefined]);
    expect(imageProblem('big.png', 'image/png', 5 * 1024 * 1024 + 1)).toBe(
      'big.png cannot be sent: it is 5.0 MiB (5,242,881 bytes); the agent takes images of at most 5 MiB.');
    expect(imageProblem('logo.svg', 'image/svg+xml', 10)).toBe(
      'logo.svg cannot be sent: it is of type image/svg+xml; the agent takes PNG, JPEG, GIF and WebP images.');
    expect(imageProblem('notes', '', 10)).toBe(
      'notes cannot be sent: it is not an image the panel recognises; the agent takes PNG, JPEG, GIF and WebP images.');
  });

  it('reads types from names, sizes from base64', () => {
    expect(['a.PNG', 'b.jpg', 'c.jpeg', 'd.gif', 'e.webp', 'f.bmp', 'g'].map(typeOfName)).toEqual(
      ['image/png', 'image/jpeg', 'image/jpeg', 'image/gif', 'image/webp', '', '']);
    expect([decodedBytes('QQ=='), decodedBytes('QUI='), decodedBytes('QUJD'), decodedBytes('')]).toEqual([1, 2, 3, 0]);
    expect([mib(12), mib(2048), mib(3 * 1024 * 1024)]).toEqual(['12 bytes', '2 KiB', '3.0 MiB']);
  });
});
