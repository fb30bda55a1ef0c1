/**
 * The Agent view: a webview in its own activity-bar container. It serves the HTML shell (strict CSP with a
 * per-load nonce, the bundled script and stylesheet) and relays messages between the webview and the
 * ChatController; all logic lives on either side of it.
 */
import * as vscode from 'vscode';
import { chatHtml } from './chatHtml';
import type { FromWebview, ToWebview } from './messages';

export const VIEW_ID = 'agentLsp.chat';

export class ChatViewProvider implements vscode.WebviewViewProvider {
  private view?: vscode.WebviewView;

  constructor(private readonly extensionUri: vscode.Uri, private readonly onMessage: (m: FromWebview) => void) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    view.webview.options = { enableScripts: true, localResourceRoots: [dist, vscode.Uri.joinPath(this.extensionUri, 'media')] };
    view.webview.onDidReceiveMessage(this.onMessage);
    view.onDidDispose(() => { if (this.view === view) this.view = undefined; });
    view.webview.html = chatHtml({
      cspSource: view.webview.cspSource,
      nonce: Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('base64'),
      script: view.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js')).toString(),
      style: view.webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'media', 'chat.css')).toString(),
    });
  }

  post(message: ToWebview): void {
    void this.view?.webview.postMessage(message);
  }

  /** Shows the view, opening its container if needed, without taking focus from the editor. */
  reveal(): void {
    if (this.view) this.view.show(true);
    else void vscode.commands.executeCommand(`${VIEW_ID}.focus`);
  }
}
