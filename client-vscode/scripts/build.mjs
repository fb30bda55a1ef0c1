// Bundles the extension (Node, CommonJS, `vscode` external) and the webview script (browser IIFE with marked
// and DOMPurify inside) into dist/, so the .vsix ships no node_modules.
import esbuild from 'esbuild';

const production = !process.argv.includes('--dev');
const common = { bundle: true, minify: production, sourcemap: !production, logLevel: 'warning', target: 'es2022' };
await Promise.all([
  esbuild.build({
    ...common, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js',
    platform: 'node', format: 'cjs', external: ['vscode'],
  }),
  esbuild.build({
    ...common, entryPoints: ['src/webview/main.ts'], outfile: 'dist/webview.js',
    platform: 'browser', format: 'iife',
  }),
]);
