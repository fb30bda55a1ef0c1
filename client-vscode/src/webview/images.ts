/**
 * Images for the message being written: pasted into the input, dropped on the composer, or attached (the
 * button asks the extension, which reads the files). Each is checked (the four types, at most 5 MiB) before it
 * is read; one that cannot go is a message naming it and why. Thumbnails above the input, × removes one.
 */
import { type Attachment, imageProblem, typeOfName } from '../images';
import type { ImageType } from '../protocol';
import { thumbnails } from './render';

export class ImageInput {
  /** The images the next message carries. */
  images: Attachment[];

  /** `problem`: a sentence for an image refused; `onChange`: the images changed (the page saves its state);
   * `unavailable`: why no image can go now (the server does not take images), or undefined. */
  constructor(private readonly box: HTMLElement, private readonly problem: (message: string) => void,
    private readonly onChange: () => void, private readonly unavailable: () => string | undefined,
    images: Attachment[] = []) {
    this.images = images;
    this.draw();
  }

  /** Listens for pasted images on `prompt` and dropped files on `zone`; files dragged from VS Code's explorer
   * come as URIs, which `readUris` hands to the extension to read. */
  listen(prompt: HTMLElement, zone: HTMLElement, readUris: (uris: string[]) => void): void {
    prompt.addEventListener('paste', (e) => {
      const files = [...(e.clipboardData?.files ?? [])];
      if (!files.length) return;  // text: the textarea pastes it
      e.preventDefault();
      void this.addFiles(files);
    });
    zone.addEventListener('dragover', (e) => {
      const types = e.dataTransfer?.types ?? [];
      if (!types.includes('Files') && !types.includes('text/uri-list') && !types.includes(CODE_URIS)) return;
      e.preventDefault();
      zone.classList.add('dropping');
    });
    zone.addEventListener('dragleave', () => zone.classList.remove('dropping'));
    zone.addEventListener('drop', (e) => {
      zone.classList.remove('dropping');
      const files = [...(e.dataTransfer?.files ?? [])];
      const uris = droppedUris(e.dataTransfer);
      if (!files.length && !uris.length) return;
      e.preventDefault();
      if (files.length) return void this.addFiles(files);
      const why = this.unavailable();
      if (why) return this.problem(why);
      readUris(uris);
    });
  }

  /** Checks and reads files; the ones that pass join the message. */
  async addFiles(files: File[]): Promise<void> {
    const why = this.unavailable();
    if (why) return this.problem(why);
    const added: Attachment[] = [];
    for (const file of files) {
      const name = file.name || 'pasted image';
      const type = file.type || typeOfName(name);
      const problem = imageProblem(name, type, file.size);
      if (problem) { this.problem(problem); continue; }
      added.push({ name, bytes: file.size, mimeType: type as ImageType, data: await base64(file) });
    }
    if (added.length) this.add(added);
  }

  add(images: Attachment[]): void {
    const why = this.unavailable();
    if (why) return this.problem(why);
    this.set([...this.images, ...images]);
  }

  set(images: Attachment[]): void {
    this.images = images;
    this.draw();
    this.onChange();
  }

  private draw(): void {
    this.box.hidden = this.images.length === 0;
    this.box.replaceChildren(...(this.images.length
      ? [thumbnails(this.images, (i) => this.set(this.images.filter((_, k) => k !== i)))] : []));
  }
}

/** What VS Code's explorer puts in a drag: a JSON list of URIs. */
const CODE_URIS = 'application/vnd.code.uri-list';

/** The URIs of a drop from VS Code (its own list, else the standard one); none for a drop of other things. */
export function droppedUris(data: DataTransfer | null): string[] {
  if (!data) return [];
  try {
    const list = JSON.parse(data.getData(CODE_URIS) || '[]');
    if (Array.isArray(list) && list.length) return list.filter((u): u is string => typeof u === 'string');
  } catch { /* not VS Code's list: the standard one below */ }
  return (data.getData('text/uri-list') || '').split(/\r?\n/).map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
}

function base64(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ''));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}
