;;; test_agent_lsp.el --- client-emacs/agent-lsp.el against the real server  -*- lexical-binding: t; -*-
;; Run: timeout 120 emacs --batch -l client-emacs/tests/test_agent_lsp.el   (exit code 0 = passed)
;; Through agent-lsp-mode (the server on a connection of its own) and the scripted Messages API: two edits, one
;; question each (no second y-or-n-p), each with its diff in a diff-mode buffer before the question; C-g at the first question rejects
;; that edit and the chat goes on to the model's reply; the second is allowed and lands in the buffer, not
;; on disk; the transcript ends "Done."; the chat is not left busy, and a next message continues the session.
;; C-u 0 M-x agent-lsp-revert undoes the edit in the buffer; M-x agent-lsp-code-action offers "Fix with agent" on a line
;; and runs it as a chat; M-x agent-lsp-memory opens AGENTS.md, and with "memoryFile": "private" the file the
;; server names (a message while it does not exist yet).
;; A missing program is one clear error naming the install command; another language server is refused with one
;; warning saying what it reported.

(load (expand-file-name "helpers.el" (file-name-directory (or load-file-name buffer-file-name))) nil t)

(defun test-transcript ()
  (with-current-buffer "*agent-lsp*" (buffer-substring-no-properties (point-min) (point-max))))

(defun test-edit (id old new)
  `((type . "tool_use") (id . ,id) (name . "edit_file")
    (input . ((path . "a.py") (old_string . ,old) (new_string . ,new)))))

(let ((code 1) (questions nil) (y-or-n nil))
  (condition-case err
      (progn
        (with-temp-file (concat test-dir "a.py") (insert "x = 1\ny = 1\n"))
        (test-fake-api
         `[((content . [((type . "text") (text . "Changing x.")) ,(test-edit "toolu_x" "x = 1" "x = 2")]))
           ((content . [((type . "text") (text . "Then y.")) ,(test-edit "toolu_y" "y = 1" "y = 2")]))
           ((content . [((type . "text") (text . "Changed y; you declined x."))]))
           ((content . [((type . "text") (text . "Same session."))]))
           ((content . [((type . "text") (text . "Nothing to fix on line 1."))]))])
        ;; The package, as a user would set it up; a missing program is one clear error.
        (load (expand-file-name "../agent-lsp.el" test-here) nil t)
        (setq agent-lsp-command '("no-such-agent-lsp"))
        (test-eq '(user-error "agent-lsp was not found (`no-such-agent-lsp').  Install it with M-x agent-lsp-install, `pipx install agent-lsp-server' or `uv tool install agent-lsp-server', or set `agent-lsp-command' to its full path.")
                 (condition-case e (agent-lsp-server-command) (user-error e)) "a missing program")
        (find-file (concat test-dir "a.py"))
        ;; A language server that is not agent-lsp: one warning saying what it reported, it is shut down, the mode stays off.
        (setq agent-lsp-command (list "python3" (expand-file-name "../../client-nvim/tests/bare_server.py" test-here)))
        (let ((warnings nil))
          (cl-letf (((symbol-function 'display-warning)
                     (lambda (type message &rest _)
                       (when (eq type 'agent-lsp) (push (list type message) warnings)))))
            (test-eq '(user-error nil nil) (list (car (condition-case e (agent-lsp-mode 1) (user-error e)))
                                                 agent-lsp-mode agent-lsp--connection)
                     "agent-lsp-mode with another server")
            (test-eq 0 (hash-table-count agent-lsp--connections) "the other server's connection"))
          (test-eq `((agent-lsp ,(concat "`python3 " (expand-file-name "../../client-nvim/tests/bare_server.py" test-here)
                                         "' is not agent-lsp (it reports `bare 0, protocol none').  Install agent-lsp with "
                                         "M-x agent-lsp-install, `pipx install agent-lsp-server' or `uv tool install agent-lsp-server' and set "
                                         "`agent-lsp-command' to its path.")))
                   warnings "another language server: one warning"))
        (setq agent-lsp-command (list "agent-lsp" "--data-dir" (concat test-dir "data")))
        (agent-lsp-mode 1)
        (cl-letf (((symbol-function 'completing-read)
                   (lambda (prompt collection &rest _)
                     ;; What is on screen when asked: the diff buffer's mode and text.
                     (push (list prompt collection
                                 (with-current-buffer "*agent-lsp-diff*" major-mode)
                                 (with-current-buffer "*agent-lsp-diff*" (buffer-string)))
                           questions)
                     (if (= (length questions) 1)
                         (signal 'quit nil)  ; C-g at the question
                       "Allow once")))
                  ((symbol-function 'y-or-n-p) (lambda (prompt) (push prompt y-or-n) t)))
          (agent-lsp-chat "change x and y")
          (test-wait "the chat" (lambda () (not agent-lsp--busy))))
        (test-eq 2 (length questions) "one question per edit")
        (setq questions (nreverse questions))
        (test-eq '("agent-lsp: Edit a.py? " ("Allow once" "Allow always" "Reject") diff-mode)
                 (butlast (nth 0 questions)) "the first question, with the diff in diff-mode")
        (test-eq "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n-x = 1\n+x = 2\n y = 1\n" (nth 3 (nth 0 questions))
                 "the first diff")
        (test-eq "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n x = 1\n-y = 1\n+y = 2\n" (nth 3 (nth 1 questions))
                 "the second diff")
        (test-eq nil y-or-n "a second question per edit")
        (test-eq (concat "> change x and y\nChanging x.\n● Edit a.py [rejected]\n"
                         "```diff\n--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n-x = 1\n+x = 2\n y = 1\n```\n"
                         "Then y.\n● Edit a.py [completed]\n"
                         "```diff\n--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n x = 1\n-y = 1\n+y = 2\n```\n"
                         "Changed y; you declined x.\nDone.\n")
                 (test-transcript) "*agent-lsp*")
        (test-eq (if (fboundp 'markdown-mode) 'markdown-mode 'text-mode)
                 (with-current-buffer "*agent-lsp*" major-mode) "the transcript's mode")
        (test-eq "x = 1\ny = 2\n" (buffer-string) "a.py in the buffer")
        (test-eq "x = 1\ny = 1\n" (with-temp-buffer (insert-file-contents (concat test-dir "a.py")) (buffer-string))
                 "a.py on disk")
        (let* ((requests (json-read-file (concat test-dir "requests.json")))
               (second (aref requests 1))
               (messages (cdr (assq 'messages second)))
               (result (aref (cdr (assq 'content (aref messages (1- (length messages))))) 0)))
          (test-eq '("toolu_x" t) (list (cdr (assq 'tool_use_id result)) (cdr (assq 'is_error result)))
                   "the rejected edit's tool result")
          (unless (string-match-p "declined" (format "%S" (cdr (assq 'content result))))
            (error "The model is not told the user declined: %S" result)))
        ;; Not left busy: the next message continues the session.
        (let ((session agent-lsp--session))
          (with-current-buffer "*agent-lsp*" (agent-lsp-chat "again"))
          (test-wait "the second chat" (lambda () (not agent-lsp--busy)))
          (test-eq session agent-lsp--session "the session after the second message")
          (unless (string-suffix-p "Done.\n\n> again\nSame session.\nDone.\n" (test-transcript))
            (error "*agent-lsp* after the second message: %S" (test-transcript))))
        ;; C-u 0 M-x agent-lsp-revert: every chat's edits undone, in the buffer; the transcript says so.
        (agent-lsp-revert 0)
        (test-wait "the revert" (lambda () (equal (buffer-string) "x = 1\ny = 1\n")))
        (test-wait "the revert's line" (lambda () (string-suffix-p "Reverted: a.py\n" (test-transcript))))
        ;; M-x agent-lsp-code-action on line 1: the server's actions offered, the one picked runs as a chat.
        (goto-char (point-min))
        (let ((offered nil))
          (cl-letf (((symbol-function 'completing-read)
                     (lambda (_prompt collection &rest _) (setq offered collection) "Fix with agent")))
            (agent-lsp-code-action))
          (test-eq '("Fix with agent") offered "the code actions on a line"))
        (test-wait "the code action's chat" (lambda () (not agent-lsp--busy)))
        (unless (string-suffix-p "> Fix with agent\nNothing to fix on line 1.\nDone.\n" (test-transcript))
          (error "*agent-lsp* after the code action: %S" (test-transcript)))
        (let* ((requests (json-read-file (concat test-dir "requests.json")))
               (messages (cdr (assq 'messages (aref requests 4)))))
          (unless (string-match-p "a.py" (format "%S" (aref messages (1- (length messages)))))
            (error "The model was not told where to fix: %S" messages)))
        ;; M-x agent-lsp-memory: AGENTS.md at the project root (memoryFile "agents", the default).
        (agent-lsp-memory)
        (test-eq (concat test-dir "AGENTS.md") buffer-file-name "the project memory")
        ;; With "memoryFile": "private" in the workspace's settings, the file the server names under its data
        ;; directory: a message while it does not exist yet, the file once it does.
        (make-directory (concat test-dir ".agent-lsp") t)
        (with-temp-file (concat test-dir ".agent-lsp/settings.json") (insert "{\"memoryFile\": \"private\"}"))
        (let ((said nil))
          (cl-letf (((symbol-function 'message) (lambda (format &rest args) (setq said (apply #'format-message format args)))))
            (agent-lsp-memory))
          (unless (and said (string-match (concat "\\`agent-lsp: the private memory file \\(" (regexp-quote test-dir)
                                                  "data/memory/[0-9a-f]+\\.md\\) does not exist yet; "
                                                  "the agent.s remember tool creates it\\'")  ; ' or ’ as format-message quotes
                                          said))
            (error "M-x agent-lsp-memory with no private memory file said %S" said))
          (let ((file (match-string 1 said)))
            (make-directory (file-name-directory file) t)
            (with-temp-file file (insert "- remembered\n"))
            (agent-lsp-memory)
            (test-eq file buffer-file-name "the private project memory")))
        (setq code 0))
    (error (princ (format "%s\n" (error-message-string err)) #'external-debugging-output)))
  (princ (format "%s - emacs agent-lsp.el (%d ms)\n" (if (= code 0) "ok" "not ok")
                 (round (* 1000 (- (float-time) test-t0)))))
  (test-exit code))
