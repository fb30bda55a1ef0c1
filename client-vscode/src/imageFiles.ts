/**
 * Agent: Attach Image…: image files read from the workspace or the disk (an explorer file, or the files the user
 * picks), each checked (type from its extension, at most 5 MiB) before it goes to the panel.
 */
import * as vscode from 'vscode';
import { type Attachment, imageProblem, typeOfName } from './images';
import { type ImageType } from './protocol';

/** Reads `uris`, or asks for image files when none are given. */
export async function pickImages(uris?: readonly vscode.Uri[]): Promise<{ images: Attachment[]; problems: string[] }> {
  const chosen = uris?.length ? uris : await vscode.window.showOpenDialog({
    canSelectMany: true, openLabel: 'Attach', title: 'Attach images to the message',
    filters: { Images: ['png', 'jpg', 'jpeg', 'gif', 'webp'] },
    defaultUri: vscode.workspace.workspaceFolders?.[0]?.uri,
  });
  const images: Attachment[] = [];
  const problems: string[] = [];
  for (const uri of chosen ?? []) {
    const name = uri.path.replace(/^.*\//, '');
    const type = typeOfName(name);
    const { size } = await vscode.workspace.fs.stat(uri);
    const problem = imageProblem(name, type, size);  // checked before reading: a huge file is never read
    if (problem) { problems.push(problem); continue; }
    const bytes = await vscode.workspace.fs.readFile(uri);
    images.push({ name, bytes: bytes.byteLength, mimeType: type as ImageType, data: Buffer.from(bytes).toString('base64') });
  }
  return { images, problems };
}
