;;; test_language_servers.el --- Emacs gets the language tools through agent-lsp's own language servers  -*- lexical-binding: t; -*-
;; Run: timeout 120 emacs --batch -l client-emacs/tests/test_language_servers.el   (exit code 0 = passed)
;; With no language server of the editor's for the buffer, agent-lsp declares no languageFeatures: the recipe of docs/emacs.md is
;; the `languageServers' setting in the user's settings file.  Here jedi-language-server (from the test venv)
;; answers find_references for a chat started with M-x agent-lsp-chat, the buffer's unsaved text included; then
;; insert_symbol asks as edit_file does: its diff in the *agent-lsp-diff* buffer (diff-mode) before the question,
;; and under its call in the transcript.

(load (expand-file-name "helpers.el" (file-name-directory (or load-file-name buffer-file-name))) nil t)

(let ((code 1))
  (condition-case err
      (let ((jedi (or (executable-find "jedi-language-server")
                      (error "jedi-language-server is not on PATH (pip install -e '.[test]')"))))
        (with-temp-file (concat test-dir "a.py") (insert "def greet(name):\n    return 'hi ' + name\n"))
        (with-temp-file (concat test-dir "b.py") (insert "from a import greet\n\nprint(greet('b'))\n"))
        ;; The recipe: languageServers in the user's own settings file, read by every front end.
        (make-directory (concat test-dir "config/agent-lsp") t)
        (with-temp-file (concat test-dir "config/agent-lsp/settings.json")
          (insert (json-encode `((languageServers . ((jedi . ((command . [,jedi]) (languages . ["python"])))))))))
        (setenv "XDG_CONFIG_HOME" (concat test-dir "config"))
        (test-fake-api
         `[((content . [((type . "tool_use") (id . "toolu_refs") (name . "find_references")
                         (input . ((path . "a.py") (line . 1) (column . 5))))]))
           ((content . [((type . "text") (text . "Two callers."))]))
           ((content . [((type . "tool_use") (id . "toolu_insert") (name . "insert_symbol")
                         (input . ((path . "a.py") (anchor . "greet") (where . "before")
                                   (text . "def hello():\n    return 'hello'\n"))))]))
           ((content . [((type . "text") (text . "Added hello."))]))])
        (load (expand-file-name "../agent-lsp.el" test-here) nil t)
        (setq agent-lsp-command (list "agent-lsp" "--data-dir" (concat test-dir "data")))
        (find-file (concat test-dir "a.py"))
        (agent-lsp-mode 1)
        (goto-char (point-max))
        (insert "\ngreet('unsaved')\n")  ; typed, not saved
        (agent-lsp-chat "who calls greet?")
        (test-wait "the chat" (lambda () (not agent-lsp--busy)))
        (let* ((requests (json-read-file (concat test-dir "requests.json")))
               (tools (mapcar (lambda (tool) (cdr (assq 'name tool))) (cdr (assq 'tools (aref requests 0)))))
               (messages (cdr (assq 'messages (aref requests 1))))
               (result (aref (cdr (assq 'content (aref messages (1- (length messages))))) 0)))
          (unless (member "find_references" tools) (error "find_references not offered: %S" tools))
          (test-eq (concat "a.py:4:1: greet('unsaved')\nb.py:1:15: from a import greet\nb.py:3:7: print(greet('b'))\n"
                           "index: unknown — `jedi` reports nothing of its indexing")
                   (cdr (assq 'content result)) "the references the model read"))
        (let ((shown (with-current-buffer "*agent-lsp*" (buffer-substring-no-properties (point-min) (point-max)))))
          (unless (string-match-p "References at a.py:1:5 \\[completed\\]" shown)
            (error "*agent-lsp* does not show the call: %S" shown)))
        (let ((questions nil)
              (diff (concat "--- a/a.py\n+++ b/a.py\n@@ -1,3 +1,7 @@\n+def hello():\n+    return 'hello'\n+\n+\n"
                            " def greet(name):\n     return 'hi ' + name\n \n")))
          (cl-letf (((symbol-function 'completing-read)
                     (lambda (prompt collection &rest _)
                       (push (list prompt collection (with-current-buffer "*agent-lsp-diff*" major-mode)
                                   (with-current-buffer "*agent-lsp-diff*" (buffer-string)))
                             questions)
                       "Allow once")))
            (agent-lsp-chat "add hello")
            (test-wait "the insertion" (lambda () (not agent-lsp--busy))))
          (test-eq `(("agent-lsp: Insert before greet in a.py? " ("Allow once" "Allow always" "Reject") diff-mode ,diff))
                   questions "one question, with the diff in diff-mode before it, as for edit_file")
          (unless (string-match-p (regexp-quote (concat "● Insert before greet in a.py [completed]\n```diff\n" (string-trim-right diff) "\n```"))
                                  (with-current-buffer "*agent-lsp*" (buffer-substring-no-properties (point-min) (point-max))))
            (error "*agent-lsp* does not show the diff under the call: %S"
                   (with-current-buffer "*agent-lsp*" (buffer-substring-no-properties (point-min) (point-max)))))
          (test-eq "def hello():\n    return 'hello'\n\n\ndef greet(name):\n    return 'hi ' + name\n\ngreet('unsaved')\n"
                   (buffer-string) "a.py in its buffer"))
        (setq code 0))
    (error (princ (format "%s\n" (error-message-string err)) #'external-debugging-output)))
  (princ (format "%s - emacs language servers of agent-lsp's own (%d ms)\n" (if (= code 0) "ok" "not ok")
                 (round (* 1000 (- (float-time) test-t0)))))
  (test-exit code))
