;;; test_next_edits.el --- next-edit suggestions in client-emacs/agent-lsp-next-edit.el  -*- lexical-binding: t; -*-
;; Run: timeout 120 emacs --batch -l client-emacs/tests/test_next_edits.el   (exit code 0 = passed)
;; Through agent-lsp-mode and the real server's demo model (after a word A is replaced by B on a line, the next
;; line of the window still holding A gets A replaced by B). Keys go through the command loop (execute-kbd-macro);
;; the requests are made by calling agent-lsp-next-edit and agent-lsp-suggest, as their idle timers do (idle timers
;; never fire in batch Emacs). agent-lsp-next-edit-mode is on with agent-lsp-mode; the edit shows as the old text
;; struck through and the new text after it (textDocument/didShowInlineEdit each time); TAB jumps to it when point is
;; not on its line and applies it when point is (agent.nextEditAccepted runs), TAB indents as usual otherwise; C-g
;; dismisses it; a ghost-text suggestion is never on screen with it, either way round; a change clears it, an answer
;; for an older version of the buffer is never drawn, and a change cancels the request on its way. An edit of several
;; lines is drawn as the lines it makes, below the old ones.
;; Skipped (exit 0, saying why) while the server on PATH does not list nextEdits in its features.

(load (expand-file-name "helpers.el" (file-name-directory (or load-file-name buffer-file-name))) nil t)

(defvar test-shown nil "Each edit shown, newest first: (LINE START-COLUMN OLD-TEXT NEW-TEXT).")
(defvar test-answers nil "Each (SERVER DOCUMENT RESULT) answered, newest first.")

(defun test-line (&optional n)
  (save-excursion
    (when n (goto-char (point-min)) (forward-line (1- n)))
    (buffer-substring-no-properties (line-beginning-position) (line-end-position))))

(defun test-on-screen ()
  "The next edit on screen as (OLD-TEXT AFTER-STRING), or nil."
  (when agent-lsp--next-edit-shown
    (let ((old nil) (new nil))
      (dolist (ov (plist-get agent-lsp--next-edit :overlays))
        (when (eq (overlay-get ov 'face) 'agent-lsp-next-edit-old)
          (setq old (buffer-substring-no-properties (overlay-start ov) (overlay-end ov))))
        (when (overlay-get ov 'after-string)
          (setq new (substring-no-properties (overlay-get ov 'after-string)))))
      (list old new))))

(defun test-stats ()
  (plist-get (jsonrpc-request agent-lsp--connection :agent/completionStats (make-hash-table)) :nextEdits))

(defun test-keys (keys)
  (execute-kbd-macro (kbd keys)))

(defun test-ask ()
  "Ask for the next edit as the idle timer does; wait for its answer."
  (let ((before (length test-answers)))
    (agent-lsp-next-edit)
    (test-wait "the next edit's answer" (lambda () (> (length test-answers) before)))))

(let ((code 1) (skipped nil))
  (condition-case err
      (progn
        (with-temp-file (concat test-dir "a.py")
          (insert "def area(size):\n    side = size\n    return size * size\n\n\nside = 2\n"))
        (load (expand-file-name "../agent-lsp.el" test-here) nil t)
        (load (expand-file-name "../agent-lsp-next-edit.el" test-here) nil t)
        (advice-add 'agent-lsp--next-edit-answered :before
                    (lambda (server document result) (push (list server document result) test-answers)))
        (advice-add 'agent-lsp--next-edit-show :after
                    (lambda (_server edit)
                      (let ((start (plist-get (plist-get edit :range) :start)))
                        (push (list (1+ (plist-get start :line)) (plist-get start :character)
                                    (car (test-on-screen)) (plist-get edit :text))
                              test-shown))))
        (setq agent-lsp-command (list "agent-lsp" "--model" "demo" "--data-dir" (concat test-dir "data")))
        (find-file (concat test-dir "a.py"))
        (agent-lsp-mode 1)
        (test-eq t agent-lsp-next-edit-mode "agent-lsp-next-edit-mode with agent-lsp-mode")
        (unless (agent-lsp--next-edit-offered agent-lsp--connection)
          (setq skipped (format "the agent-lsp on PATH (%s) lists no nextEdits in its features"
                                (plist-get (agent-lsp--info agent-lsp--connection) :version)))
          (error "skip"))
        (let ((tab (key-binding (kbd "TAB"))))
          ;; size -> width on line 1: the demo carries the rename on to line 2.
          (goto-char (point-min))
          (search-forward "(")
          (test-keys "M-d w i d t h")
          (test-eq "def area(width):" (test-line) "line 1 after the rename")
          (test-ask)
          (test-eq '("size" "width") (test-on-screen) "the edit on line 2: old text struck, the new after it")
          (test-eq "    side = size" (test-line 2) "line 2 unchanged while shown")
          (test-eq 'agent-lsp-next-edit-accept (key-binding (kbd "TAB")) "TAB while a next edit is shown")
          (test-wait "didShowInlineEdit" (lambda () (equal 1 (plist-get (test-stats) :shown))))
          ;; TAB away from it jumps, and the edit stays.
          (test-keys "TAB")
          (test-eq '(2 11) (list (line-number-at-pos) (current-column)) "point after TAB: the edit's start")
          (test-eq '("size" "width") (test-on-screen) "still shown after the jump")
          (test-eq "def area(width):\n    side = size\n" (buffer-substring-no-properties (point-min) (save-excursion (goto-char (point-min)) (forward-line 2) (point)))
                   "the jump changed nothing")
          ;; A ghost-text suggestion answered while it is shown stays off the screen ...
          (agent-lsp-suggest)
          (test-wait "the suggestion's answer" (lambda () (null agent-lsp--suggestion-request)))
          (test-eq nil agent-lsp--suggestion-shown "no ghost text beside the next edit")
          (test-eq '("size" "width") (test-on-screen) "the next edit stays")
          ;; C-g dismisses it; then the same suggestion is drawn (so it was kept off only by the next edit) ...
          (test-keys "C-g")
          (test-eq nil (test-on-screen) "dismissed")
          (test-eq tab (key-binding (kbd "TAB")) "TAB with nothing shown")
          (agent-lsp-suggest)
          (test-wait "the ghost text" (lambda () agent-lsp--suggestion-shown))
          (test-eq "2" (plist-get agent-lsp--suggestion :text) "the ghost text at line 2")
          ;; ... and while it is shown no next edit is asked for.
          (agent-lsp-next-edit)
          (test-eq nil agent-lsp--next-edit-request "no next edit asked beside ghost text")
          (test-keys "C-g")
          ;; Asked again from line 1 with no change: shown again; TAB jumps, TAB applies it and its command runs.
          (test-keys "C-p C-e")
          (test-ask)
          (test-eq '("size" "width") (test-on-screen) "shown again")
          (test-keys "TAB TAB")
          (test-eq "    side = width" (test-line) "line 2 applied")
          (test-eq '(2 16) (list (line-number-at-pos) (current-column)) "point after the applied text")
          (test-eq nil (test-on-screen) "nothing shown after applying")
          (test-wait "agent.nextEditAccepted" (lambda () (equal 1 (plist-get (test-stats) :accepted)))))

        ;; The next one (Tab, Tab, Tab ...): line 3.  A change clears it; its answer, late, is never drawn.
        (test-ask)
        (test-eq '("size * size" "width * width") (test-on-screen) "the edit on line 3")
        (let ((answer (car test-answers)))
          (test-keys "x")
          (test-eq nil (test-on-screen) "cleared by typing")
          (test-eq nil (apply #'agent-lsp--next-edit-answered answer) "the answer for the older version dropped")
          (test-eq nil (test-on-screen) "nothing drawn from it"))

        ;; A change while the request is on its way cancels it ($/cancelRequest with its id); nothing is drawn.
        (let ((cancels nil) (asked nil) (shown (length test-shown)))
          (advice-add 'jsonrpc-notify :before
                      (lambda (_conn method params)
                        (when (eq method :$/cancelRequest) (push (plist-get params :id) cancels))))
          (agent-lsp-next-edit)
          (setq asked (cdr agent-lsp--next-edit-request))
          (test-keys "DEL")
          (test-eq (list asked) cancels "the request on its way cancelled")
          (test-eq nil agent-lsp--next-edit-request "no request left")
          (test-stats)                  ; a round trip after the cancel
          (test-eq shown (length test-shown) "nothing drawn after the cancel"))

        ;; The demo's edits are within a line; one of several lines shows its lines as they will read below its
        ;; last line, and whole lines deleted show no new line.
        (with-temp-buffer
          (insert "a = 1\nb = 2\nc = 3\n")
          (let ((drawn (lambda (overlays)
                         (mapcar (lambda (ov) (list (overlay-start ov) (overlay-end ov)
                                                    (overlay-get ov 'face) (overlay-get ov 'after-string)))
                                 overlays))))
            (test-eq '((7 12 agent-lsp-next-edit-old nil) (12 12 nil "\nx = 2\ny = 2"))
                     (funcall drawn (agent-lsp--next-edit-draw 7 12 "x = 2\ny = 2")) "one line made two")
            (test-eq '((7 13 agent-lsp-next-edit-old nil))
                     (funcall drawn (agent-lsp--next-edit-draw 7 13 "")) "a line deleted")))

        (test-eq '((3 11 "size * size" "width * width") (2 11 "size" "width") (2 11 "size" "width"))
                 test-shown "every edit shown")
        (test-eq 3 (plist-get (test-stats) :shown) "didShowInlineEdit, once per edit shown")
        (test-eq "def area(width):\n    side = width\n    return size * size\n\n\nside = 2\n"
                 (buffer-string) "a.py in the buffer")
        (setq code 0))
    (error (if skipped
               (setq code 0)
             (princ (format "%s\n" (error-message-string err)) #'external-debugging-output))))
  (princ (format "%s - emacs next edits%s (%d ms)\n" (if (= code 0) "ok" "not ok")
                 (if skipped (format " # SKIP %s" skipped) "")
                 (round (* 1000 (- (float-time) test-t0)))))
  (test-exit code))
