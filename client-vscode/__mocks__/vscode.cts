// The `vscode` module for unit tests (vitest): jest-mock-vscode's implementation of the API, with vi mocks.
import { createVSCodeMock } from 'jest-mock-vscode';
import { vi } from 'vitest';

module.exports = createVSCodeMock(vi);
