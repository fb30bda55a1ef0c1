;;; test_beside_eglot.el --- agent-lsp beside eglot's own language server in one buffer  -*- lexical-binding: t; -*-
;; Run: timeout 150 emacs --batch -l client-emacs/tests/test_beside_eglot.el   (exit code 0 = passed)
;; The user's setup: loading the package changes nothing (eglot-server-programs as it was); agent-lsp-mode in a
;; Python buffer with no language server yet starts agent-lsp on a connection of its own, declaring no language
;; methods; eglot then runs jedi-language-server (from the test venv) for the buffer, agent-lsp restarts once to
;; declare the methods jedi answers, and eglot's server for the buffer stays jedi. The model's find_references is
;; answered by jedi through the editor (agent/languageFeature: no languageServers setting anywhere), unsaved text
;; included; completion from jedi still works in the buffer; a suggestion from agent-lsp (the demo completion model)
;; shows as ghost text. C-g while a request waits (a chat whose model never answers) sends $/cancelRequest with its
;; id, and the connection goes on. Turning agent-lsp-mode off closes the document and leaves eglot as it was;
;; agent-lsp-global-mode turns it on in the Python files (fed to the project's agent-lsp), not in a text file.

(load (expand-file-name "helpers.el" (file-name-directory (or load-file-name buffer-file-name))) nil t)
(require 'eglot)

(defun test-ghost ()
  "The suggestion's text on screen (the overlay's string), or nil."
  (let ((ov (plist-get agent-lsp--suggestion :overlay)))
    (and agent-lsp--suggestion-shown ov (overlay-buffer ov)
         (substring-no-properties (or (overlay-get ov 'after-string) (overlay-get ov 'display))))))

(let ((code 1) (asked nil) (cancels nil))
  (condition-case err
      (let ((jedi (or (executable-find "jedi-language-server")
                      (error "jedi-language-server is not on PATH (pip install -e '.[test]')")))
            (programs (copy-tree eglot-server-programs)))
        (with-temp-file (concat test-dir "a.py")
          (insert "def greet(name):\n    return 'hi ' + name\n\n\nprint(greet('a'))\n"))
        (with-temp-file (concat test-dir "b.py") (insert "from a import greet\n\nprint(greet('b'))\n"))
        (setenv "XDG_CONFIG_HOME" (concat test-dir "config"))  ; no user settings: no languageServers
        (test-fake-api
         `[((content . [((type . "tool_use") (id . "toolu_refs") (name . "find_references")
                         (input . ((path . "a.py") (line . 1) (column . 5))))]))
           ((content . [((type . "text") (text . "Three callers."))]))
           ((hold . t))])  ; the model never answers the next chat: C-g is sure to come first
        (load (expand-file-name "../agent-lsp.el" test-here) nil t)
        (test-eq programs eglot-server-programs "eglot-server-programs after loading the package")
        (test-eq nil agent-lsp--connection "a connection after loading the package")
        (setq agent-lsp-command (list "agent-lsp" "--data-dir" (concat test-dir "data"))
              agent-lsp-settings '(:completions (:model "demo")))
        (find-file (concat test-dir "a.py"))
        (agent-lsp-mode 1)
        (test-eq nil (agent-lsp--methods agent-lsp--connection) "the language methods declared with no server to ask")
        ;; The user's own language server, as M-x eglot would start it: agent-lsp restarts to ask it.
        (setq eglot-server-programs (cons (cons 'python-mode (list jedi)) eglot-server-programs))
        (let ((before agent-lsp--connection))
          (apply #'eglot (eglot--guess-contact))
          (test-wait "eglot to connect to jedi, and agent-lsp to restart"
                     (lambda () (and (eglot-current-server) agent-lsp--connection
                                     (not (eq before agent-lsp--connection)))))
          (test-eq nil (jsonrpc-running-p before) "the first agent-lsp after the restart"))
        (let ((jedi-server (eglot-current-server)))
          (advice-add 'agent-lsp--language-feature :before (lambda (_conn method &rest _) (push method asked)))
          (advice-add 'jsonrpc-notify :before
                      (lambda (_conn method params) (when (eq method :$/cancelRequest) (push (plist-get params :id) cancels))))
          (test-eq t agent-lsp-mode "agent-lsp-mode after the restart")
          (test-eq "jedi-language-server" (plist-get (eglot--server-info (eglot-current-server)) :name)
                   "eglot's server is jedi's")
          (test-eq "agent-lsp-server" (plist-get (agent-lsp--info agent-lsp--connection) :name) "agent-lsp's server")
          (test-eq '("textDocument/definition" "textDocument/typeDefinition" "textDocument/references"
                     "textDocument/hover" "textDocument/documentSymbol" "workspace/symbol"
                     "textDocument/rename")
                   (agent-lsp--methods agent-lsp--connection) "the language methods declared: jedi's")

          ;; The agent's find_references, from jedi through the editor, unsaved text included.
          (goto-char (point-max))
          (insert "greet('unsaved')\n")  ; typed, not saved
          (agent-lsp-chat "who calls greet?")
          (test-wait "the chat" (lambda () (not agent-lsp--busy)))
          (test-eq '("textDocument/references") asked "what agent-lsp asked the editor")
          (let* ((requests (json-read-file (concat test-dir "requests.json")))
                 (messages (cdr (assq 'messages (aref requests 1))))
                 (result (aref (cdr (assq 'content (aref messages (1- (length messages))))) 0)))
            (test-eq (concat "a.py:5:7: print(greet('a'))\na.py:6:1: greet('unsaved')\n"
                             "b.py:1:15: from a import greet\nb.py:3:7: print(greet('b'))\n"
                             "index: unknown — the editor does not say whether its language servers finished indexing")
                     (cdr (assq 'content result)) "the references the model read"))
          (let ((tools (agent-lsp--request agent-lsp--connection :agent/tools (make-hash-table))))
            (test-eq "editor" (plist-get (cl-find "find_references" (plist-get tools :tools)
                                                  :key (lambda (tool) (plist-get tool :name)) :test #'equal)
                                         :origin)
                     "find_references' origin"))

          ;; Completion from jedi still works in the buffer.
          (insert "gre")
          (let ((capf (eglot-completion-at-point))
                (jsonrpc-default-request-timeout 60))  ; jedi's first completion takes its time on a busy machine
            (unless (member "greet" (all-completions "gre" (nth 2 capf)))
              (error "jedi's completion of gre: %S" (all-completions "gre" (nth 2 capf)))))

          ;; A suggestion from agent-lsp shows.
          (delete-char -3)
          (insert "pri")
          (agent-lsp-suggest)
          (test-wait "agent-lsp's suggestion" #'test-ghost)
          (test-eq "nt(greet('a'))" (test-ghost) "the ghost text")

          ;; C-g while a request waits: $/cancelRequest with its id; the connection goes on.
          (let* ((conn agent-lsp--connection)
                 (next (1+ (jsonrpc--next-request-id conn))))
            (setq cancels nil)
            (run-at-time 0 nil (lambda () (setq quit-flag t)))  ; C-g, as the keyboard sets it
            (test-eq 'quit (condition-case nil
                               (progn (agent-lsp--request conn :agent/chat (list :message "wait")) 'answered)
                             (quit 'quit))
                     "C-g while waiting")
            (test-eq (list next) cancels "the $/cancelRequest sent")
            (unless (plist-get (agent-lsp--request conn :agent/commands (make-hash-table)) :commands)
              (error "No commands after the cancelled request")))

          ;; Off: the document closed, eglot's server as it was.
          (agent-lsp-mode -1)
          (test-eq nil agent-lsp--connection "the buffer's connection after agent-lsp-mode off")
          (test-eq jedi-server (eglot-current-server) "eglot's server after agent-lsp-mode off")

          ;; agent-lsp-global-mode: on again in a.py, and in a Python file visited next, both fed to the project's
          ;; running agent-lsp; off in another kind of file.
          (let ((conn (gethash (agent-lsp--project-root) agent-lsp--connections)))
            (agent-lsp-global-mode 1)
            (find-file (concat test-dir "b.py"))
            (test-eq (list t conn '("a.py" "b.py"))
                     (list agent-lsp-mode agent-lsp--connection
                           (sort (mapcar #'buffer-name (agent-lsp--buffers conn)) #'string<))
                     "b.py with agent-lsp-global-mode")
            (find-file (concat test-dir "notes.txt"))
            (test-eq nil agent-lsp-mode "a text file with agent-lsp-global-mode")))
        (setq code 0))
    (error (princ (format "%s\n" (error-message-string err)) #'external-debugging-output)))
  (princ (format "%s - emacs agent-lsp beside eglot and jedi (%d ms)\n" (if (= code 0) "ok" "not ok")
                 (round (* 1000 (- (float-time) test-t0)))))
  (test-exit code))
