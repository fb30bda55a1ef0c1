;;; test_eglot.el --- the Emacs recipe (docs/agent-lsp-eglot.el) against the real server  -*- lexical-binding: t; -*-
;; Run: timeout 60 emacs --batch -l client-nvim/tests/test_eglot.el   (exit code 0 = passed)
;; A chat through eglot 1.9: the answer streams into *agent-lsp*, the edit's question comes as
;; window/showMessageRequest (answered "Allow once"), the edit lands in the buffer and not on disk,
;; and a second message continues the session.

(require 'cl-lib)
(require 'json)
(defvar test-dir (file-name-as-directory (make-temp-file "agent-lsp-eglot" t)))
(defvar test-here (file-name-directory (or load-file-name buffer-file-name)))
(defvar test-t0 (float-time))

(defun test-wait (what pred &optional seconds)
  "Run the event loop until PRED holds, or fail naming WHAT."
  (let ((end (+ (float-time) (or seconds 20))))
    (while (not (funcall pred))
      (when (> (float-time) end) (error "Timed out waiting for %s" what))
      (accept-process-output nil 0.02))))

(defun test-eq (expected actual what)
  (unless (equal expected actual)
    (error "%s\nexpected: %S\nactual:   %S" what expected actual)))

(defun test-fake-api (script)
  "Start the scripted Messages API with SCRIPT; point the anthropic SDK at it."
  (let* ((file (concat test-dir "script.json")) (url nil))
    (with-temp-file file (insert (json-encode script)))
    (make-process :name "fake-api" :noquery t
                  :command (list "python3" (expand-file-name "../../tests/fakes/messages_api.py" test-here) file)
                  :filter (lambda (_ out) (unless url (setq url (car (split-string out "\n"))))))
    (test-wait "the fake Messages API" (lambda () url) 5)
    (setenv "ANTHROPIC_API_KEY" "test")
    (setenv "ANTHROPIC_BASE_URL" url)))

(let ((code 1) (questions nil))
  (condition-case err
      (progn
        (with-temp-file (concat test-dir "a.py") (insert "x = 1\n"))
        (test-fake-api
         [((content . [((type . "text") (text . "Changing x."))
                       ((type . "tool_use") (name . "edit_file")
                        (input . ((path . "a.py") (old_string . "x = 1") (new_string . "x = 2"))))]))
          ((content . [((type . "text") (text . "Done."))]))
          ((content . [((type . "text") (text . "Same session."))]))])
        ;; The recipe, as a user would load it.
        (setq agent-lsp-command (list "agent-lsp" "--data-dir" (concat test-dir "data")))
        (load (expand-file-name "../../docs/agent-lsp-eglot.el" test-here) nil t)
        (setq eglot-confirm-server-initiated-edits nil) ; as docs/emacs.md suggests: no y-or-n-p per edit
        (find-file (concat test-dir "a.py"))
        (apply #'eglot (eglot--guess-contact))  ; what M-x eglot does, without its prompts
        ;; eglot 1.9 waits for the handshake with one (accept-process-output nil 3), which returns at the
        ;; first output of any process: wait for the connection itself.
        (test-wait "eglot to connect" #'eglot-current-server 10)
        (cl-letf (((symbol-function 'completing-read)
                   (lambda (prompt collection &rest _)
                     (push (cons prompt collection) questions)
                     "Allow once")))
          (agent-lsp-chat "change x")
          (test-wait "the chat" (lambda () (with-current-buffer "*agent-lsp*"
                                             (string-match-p "^-- " (buffer-string))))))
        (test-eq "> change x\nChanging x.\n● Edit a.py\n  completed\nDone.\n-- end_turn\n"
                 (with-current-buffer "*agent-lsp*" (buffer-string)) "*agent-lsp*")
        (test-eq '(("Allow once" "Allow always" "Reject")) (mapcar #'cdr questions) "the question's choices")
        (test-eq "x = 2\n" (buffer-string) "a.py in the buffer")
        (test-eq "x = 1\n" (with-temp-buffer (insert-file-contents (concat test-dir "a.py")) (buffer-string))
                 "a.py on disk")
        (let ((session agent-lsp--session))
          (with-current-buffer "*agent-lsp*" (agent-lsp-chat "again"))
          (test-wait "the second chat" (lambda () (with-current-buffer "*agent-lsp*"
                                                    (string-match-p "Same session.\n-- " (buffer-string)))))
          (test-eq session agent-lsp--session "the session after the second message"))
        (test-eq "> change x\nChanging x.\n● Edit a.py\n  completed\nDone.\n-- end_turn\n> again\nSame session.\n-- end_turn\n"
                 (with-current-buffer "*agent-lsp*" (buffer-string)) "*agent-lsp* after the second message")
        (setq code 0))
    (error (princ (format "%s\n" (error-message-string err)) #'external-debugging-output)))
  (princ (format "%s - emacs eglot recipe (%d ms)\n" (if (= code 0) "ok" "not ok")
                 (round (* 1000 (- (float-time) test-t0)))))
  (kill-emacs code))
