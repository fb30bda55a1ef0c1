;;; test_suggestions.el --- suggestions as you type in client-emacs/agent-lsp.el  -*- lexical-binding: t; -*-
;; Run: timeout 120 emacs --batch -l client-emacs/tests/test_suggestions.el   (exit code 0 = passed)
;; Through agent-lsp-mode and the real server's demo model (the line typed so far completed as another line of an
;; open buffer continues). Keys go through the command loop (execute-kbd-macro: their bindings, and
;; post-command-hook after each); the request is made by calling agent-lsp-suggest, as the idle timer does
;; (idle timers never fire in batch Emacs). agent-lsp-suggestion-mode is on with agent-lsp-mode; the
;; suggestion shows as an overlay after point; TAB accepts it only while one is shown (else TAB indents) and its
;; command runs; typing what it offers keeps the rest; M-<right> accepts a word; C-g dismisses; an answer for
;; text that changed meanwhile is never drawn, and its request is cancelled. The server counts what was shown and accepted.

(load (expand-file-name "helpers.el" (file-name-directory (or load-file-name buffer-file-name))) nil t)

(defvar test-drawn nil "Each text drawn as a suggestion, newest first.")

(defun test-ghost ()
  "The suggestion's text on screen (the overlay's string), or nil."
  (let ((ov (plist-get agent-lsp--suggestion :overlay)))
    (and agent-lsp--suggestion-shown ov (overlay-buffer ov)
         (substring-no-properties (or (overlay-get ov 'after-string) (overlay-get ov 'display))))))

(defun test-line ()
  (buffer-substring-no-properties (line-beginning-position) (line-end-position)))

(defun test-stats ()
  (jsonrpc-request agent-lsp--connection :agent/completionStats (make-hash-table)))

(defun test-keys (keys)
  (execute-kbd-macro (kbd keys)))

(let ((code 1))
  (condition-case err
      (progn
        (with-temp-file (concat test-dir "a.py") (insert "import os\nprint('hello world')\n"))
        (load (expand-file-name "../agent-lsp.el" test-here) nil t)
        (advice-add 'agent-lsp--suggestion-draw :after
                    (lambda () (push (plist-get agent-lsp--suggestion :text) test-drawn)))
        (setq agent-lsp-command (list "agent-lsp" "--model" "demo" "--data-dir" (concat test-dir "data")))
        (find-file (concat test-dir "a.py"))
        (agent-lsp-mode 1)
        (test-eq t agent-lsp-suggestion-mode "agent-lsp-suggestion-mode with agent-lsp-mode")
        (goto-char (point-max))
        (let ((tab (key-binding (kbd "TAB"))))
          (test-keys "p r i")
          (agent-lsp-suggest)
          (test-wait "the suggestion" #'test-ghost)
          (test-eq "nt('hello world')" (test-ghost) "the ghost text")
          (test-eq "pri" (test-line) "the buffer holds what was typed only")
          (test-eq 'agent-lsp-suggestion-accept (key-binding (kbd "TAB")) "TAB while a suggestion is shown")
          ;; Typing what it offers keeps the rest, with no request.
          (test-keys "n")
          (test-eq "t('hello world')" (test-ghost) "the rest after typing through")
          (test-keys "TAB")
          (test-eq "print('hello world')" (test-line) "the accepted line")
          (test-eq (line-end-position) (point) "point after the accepted text")
          (test-eq nil (test-ghost) "nothing shown after the accept")
          (test-eq tab (key-binding (kbd "TAB")) "TAB without a suggestion"))
        (test-wait "the accepted command" (lambda () (equal 1 (plist-get (test-stats) :accepted))))

        ;; A word at a time.
        (test-keys "RET p r i")
        (agent-lsp-suggest)
        (test-wait "the suggestion on the next line" #'test-ghost)
        (test-keys "M-<right>")
        (test-eq "print" (test-line) "the first word accepted")
        (test-eq "('hello world')" (test-ghost) "the rest after a word")
        (test-keys "M-<right> TAB")
        (test-eq "print('hello world')" (test-line) "the line after a word and the rest")
        (test-wait "the partial and whole acceptances"
                   (lambda () (let ((s (test-stats)))
                                (and (equal 2 (plist-get s :partiallyAccepted)) (equal 2 (plist-get s :accepted))))))

        ;; C-g dismisses; the buffer keeps what was typed.
        (test-keys "RET p r i")
        (agent-lsp-suggest)
        (test-wait "the suggestion on line 5" #'test-ghost)
        (test-keys "C-g")
        (test-eq nil (test-ghost) "dismissed")
        (test-eq "pri" (test-line) "line 5 after C-g")

        ;; An answer for text that changed meanwhile is dropped; the newer request cancels the older one
        ;; ($/cancelRequest with its id); the next request's answer is drawn.
        (setq test-drawn nil)
        (let ((cancels nil) (first nil))
          (advice-add 'jsonrpc-notify :before
                      (lambda (_conn method params)
                        (when (eq method :$/cancelRequest) (push (plist-get params :id) cancels))))
          (agent-lsp-suggest)
          (setq first agent-lsp--suggestion-request)
          (test-keys "n")
          (agent-lsp-suggest)
          (test-wait "the newer answer" #'test-ghost)
          (test-eq '("t('hello world')") test-drawn "only the newer answer drawn")
          (test-eq (list first) cancels "the older request cancelled"))

        (test-eq 4 (plist-get (test-stats) :shown) "didShowCompletion, once per suggestion shown")
        (test-eq "import os\nprint('hello world')\nprint('hello world')\nprint('hello world')\nprin"
                 (buffer-string) "a.py in the buffer")
        (setq code 0))
    (error (princ (format "%s\n" (error-message-string err)) #'external-debugging-output)))
  (princ (format "%s - emacs suggestions as you type (%d ms)\n" (if (= code 0) "ok" "not ok")
                 (round (* 1000 (- (float-time) test-t0)))))
  (test-exit code))
