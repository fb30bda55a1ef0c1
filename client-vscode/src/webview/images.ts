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

  /** Listens for pasted images on `prompt` and dropped files on `zone`. */
  listen(prompt: HTMLElement, zone: HTMLElement): void {
    prompt.addEventListener('paste', (e) => {
      const files = [...(e.clipboardData?.files ?? [])];
      if (!files.length) return;  // text: the textarea pastes it
      e.preventDefault();
      void this.addFiles(files);
    });
    zone.addEventListener('dragover', (e) => {
      if (!e.dataTransfer?.types.includes('Files')) return;
      e.preventDefault();
      zone.classList.add('dropping');
    });
    zone.addEventListener('dragleave', () => zone.classList.remove('dropping'));
    zone.addEventListener('drop', (e) => {
      zone.classList.remove('dropping');
      const files = [...(e.dataTransfer?.files ?? [])];
      if (!files.length) return;
      e.preventDefault();
      void this.addFiles(files);
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

function base64(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ''));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}
