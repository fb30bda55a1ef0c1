;;; helpers.el --- what the client-emacs tests share  -*- lexical-binding: t; -*-
;; Loaded first by each test: a scratch directory, waiting on a condition, an equality check that says what
;; differs, leaving with agent-lsp's and eglot's servers shut down, and the scripted Messages API (tests/fakes/messages_api.py) the anthropic SDK is pointed at.

(require 'cl-lib)
(require 'json)
(defvar test-dir (file-name-as-directory (make-temp-file "agent-lsp-emacs" t)))
(defvar test-here (file-name-directory (or load-file-name buffer-file-name))
  "client-emacs/tests/.")
(defvar test-t0 (float-time))

(defun test-wait (what pred)
  "Run the event loop until PRED holds, or fail naming WHAT (the ceiling only ends a broken test)."
  (let ((end (+ (float-time) 90)))
    (while (not (funcall pred))
      (when (> (float-time) end) (error "Timed out waiting for %s" what))
      (accept-process-output nil 0.05))))

(defun test-exit (code)
  "Shut agent-lsp's and eglot's servers down, then leave Emacs with CODE.
A server still talking as Emacs is killed (its first workspace/configuration request, say) makes eglot answer a
process being torn down, an error that turns a passed test into exit 255."
  (when (fboundp 'agent-lsp-shutdown-all)
    (ignore-errors (agent-lsp-shutdown-all)))
  (when (fboundp 'eglot-shutdown-all)
    (ignore-errors (eglot-shutdown-all)))
  (kill-emacs code))

(defun test-eq (expected actual what)
  (unless (equal expected actual)
    (error "%s\nexpected: %S\nactual:   %S" what expected actual)))

(defun test-fake-api (script)
  "Start the scripted Messages API with SCRIPT; point the anthropic SDK at it."
  (let* ((file (concat test-dir "script.json")) (url nil))
    (with-temp-file file (insert (json-encode script)))
    (let ((default-directory (expand-file-name "../../" test-here)))  ; the repository: `python3 -m tests.fakes...`
      (make-process :name "fake-api" :noquery t
                    :command (list "python3" "-m" "tests.fakes.messages_api"
                                   file "--record" (concat test-dir "requests.json"))
                    :filter (lambda (_ out) (unless url (setq url (car (split-string out "\n")))))))
    (test-wait "the fake Messages API" (lambda () url))
    (setenv "ANTHROPIC_API_KEY" "test")
    (setenv "ANTHROPIC_BASE_URL" url)))

(provide 'helpers)
;;; helpers.el ends here
