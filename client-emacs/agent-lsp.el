;;; agent-lsp.el --- A coding agent beside your language server, over agent-lsp -*- lexical-binding: t; -*-

;; Version: 0.3.0
;; Package-Requires: ((emacs "28.1") (jsonrpc "1.0.14"))
;; Keywords: tools, convenience

;;; Commentary:

;; agent-lsp runs a coding agent as a language server.  This package runs it on a connection of its own (Emacs's
;; `jsonrpc' library), one per project, beside whatever eglot or lsp-mode runs for the buffer: your language
;; server stays yours, and the agent's language tools (references, definitions, rename...) ask it through
;; this package.  Loading the package changes nothing; turn it on:
;;
;;   (agent-lsp-global-mode 1)  in every buffer of `agent-lsp-modes', or M-x agent-lsp-mode in one buffer
;;
;; Then:
;;
;;   M-x agent-lsp-chat         ask; the answer streams into *agent-lsp* (markdown-mode when installed)
;;   M-x agent-lsp-stop         stop the running chat
;;   M-x agent-lsp-new-session  the next message starts a new session
;;   M-x agent-lsp-revert       undo the last chat's edits (C-u N: those of the chats after the first N)
;;   M-x agent-lsp-memory       open the project memory (AGENTS.md, or the private memory file)
;;   M-x agent-lsp-command-run  run one of the server's /commands or skills (completing-read over both)
;;   M-x agent-lsp-attach-image attach an image (png, jpg, gif, webp; at most 5 MiB) to the next message
;;   M-x agent-lsp-code-action  fix, explain or refactor the line or region with the agent
;;
;; While you type, `agent-lsp-suggestion-mode' (on with `agent-lsp-mode') shows the server's suggestion as
;; ghost text after point; TAB accepts it, M-<right> a word, M-n / M-p cycle, C-g dismisses.
;;
;; The agent's plan (its todo list) is a checklist at the top of *agent-lsp*; a subagent's tool calls are
;; indented under its task.  In the message prompt, TAB after a leading / completes the commands and skills.
;;
;; Before an edit or a command the agent asks once: an edit's diff is shown in a diff-mode buffer, then
;; Allow once / Allow always / Reject.  C-g at the question rejects, and the chat goes on.  Docs: docs/emacs.md.

;;; Code:

(require 'jsonrpc)
(require 'cl-lib)
(require 'diff-mode)
(require 'project)
(require 'url-util)

(declare-function markdown-mode "markdown-mode")
(declare-function eglot-current-server "eglot")
(declare-function eglot--capabilities "eglot")
(declare-function eglot--signal-textDocument/didChange "eglot")
(declare-function lsp-request "lsp-mode")
(declare-function lsp-workspaces "lsp-mode")
(declare-function lsp--capability "lsp-mode")
(defvar lsp-mode)

(defgroup agent-lsp nil
  "A coding agent's chat over the agent-lsp language server."
  :group 'tools
  :prefix "agent-lsp-")

(defcustom agent-lsp-command '("agent-lsp")
  "The server command and its arguments.
E.g. (\"agent-lsp\" \"--model\" \"demo\") for the offline demo model.
Install the server with `pipx install agent-lsp-server' or
`uv tool install agent-lsp-server'."
  :type '(repeat string))

(defcustom agent-lsp-modes '(python-mode)
  "Major modes `agent-lsp-global-mode' turns `agent-lsp-mode' on in.
Their modes derived from them too.  Read when a buffer is visited, so
a change applies to the buffers visited afterwards.  Their eglot or
lsp-mode server stays the one you chose."
  :type '(repeat symbol))

(defcustom agent-lsp-settings nil
  "The server's settings (docs/settings.md), a plist.
Sent at start (initializationOptions) and as the `agentLsp' section of
workspace/configuration, e.g. (:model \"demo\" :completions (:maxLines 4))."
  :type 'plist)

(defcustom agent-lsp-permission-mode nil
  "Permission mode of the chats; nil leaves it to the server's settings."
  :type '(choice (const :tag "The server's setting" nil)
                 (const "default") (const "acceptEdits") (const "plan") (const "bypassPermissions")))

(defcustom agent-lsp-sync-delay 0.5
  "Idle seconds after a change before it is sent to the server.
Any request to the server sends the pending changes first."
  :type 'number)

(defcustom agent-lsp-suggestions t
  "Non-nil: suggestions as you type in the buffers agent-lsp serves.
`agent-lsp-suggestion-mode' is turned on in them.  Whether the server
makes any is its `completions.enabled' setting."
  :type 'boolean)

(defvar agent-lsp-suggestion-mode)

(defconst agent-lsp--install
  "M-x agent-lsp-install, `pipx install agent-lsp-server' or `uv tool install agent-lsp-server'"
  "How to install the server, for messages.")

(defcustom agent-lsp-install-directory (locate-user-emacs-file "agent-lsp/venv")
  "The virtual environment \\[agent-lsp-install] installs the server into."
  :type 'directory)

(defcustom agent-lsp-install-source "agent-lsp-server"
  "What \\[agent-lsp-install] installs.
The package's name (from the package index), or a wheel file."
  :type 'string)

(defclass agent-lsp-connection (jsonrpc-process-connection)
  ((root :initarg :root :reader agent-lsp--root :documentation "The project's root directory.")
   (capabilities :initform nil :accessor agent-lsp--capabilities :documentation "The server's capabilities.")
   (info :initform nil :accessor agent-lsp--info :documentation "The server's serverInfo.")
   (buffers :initform nil :accessor agent-lsp--buffers :documentation "The buffers it is fed.")
   (methods :initarg :methods :reader agent-lsp--methods
            :documentation "The language methods declared in initialize: answered by the editor's servers."))
  :documentation "agent-lsp on a connection of its own, for one project.")

(defvar agent-lsp--connections (make-hash-table :test #'equal) "Project root -> its `agent-lsp-connection'.")
(defvar agent-lsp--server nil "The connection of the chat.")
(defvar agent-lsp--session nil "The chat's session id: later messages continue it.")
(defvar agent-lsp--busy nil "Non-nil while a chat runs.")
(defvar agent-lsp--tools nil "Tool call id -> marker of its line in *agent-lsp*, for this chat.")
(defvar agent-lsp--plan-end nil "Marker at the end of the plan block at the top of *agent-lsp*, if one is shown.")
(defvar agent-lsp--images nil "Images for the next message: (FILE MIME-TYPE BASE64), in the order attached.")
(defvar-local agent-lsp--connection nil "The connection this buffer is fed to.")
(defvar-local agent-lsp--version 0 "The buffer's document version, as the server has it.")
(defvar-local agent-lsp--dirty nil "Non-nil when the buffer changed since the server was sent its text.")
(defvar agent-lsp--sync-timer nil "The idle timer that sends pending changes.")

;;; Finding and checking the server

(defun agent-lsp--missing-message (program)
  "The message for a PROGRAM that cannot be run."
  (format "agent-lsp was not found (`%s').  Install it with %s, or set `agent-lsp-command' to its full path."
          program agent-lsp--install))

(defun agent-lsp-server-command ()
  "The command that starts agent-lsp; a missing program is one clear error.
The default command, when `agent-lsp' is not on the PATH, is the server
\\[agent-lsp-install] installed."
  (let* ((installed (agent-lsp--installed-program))
         (command (if (and installed (equal agent-lsp-command '("agent-lsp")) (not (executable-find "agent-lsp")))
                      (list installed)
                    agent-lsp-command)))
    (unless (executable-find (car command))
      (user-error "%s" (agent-lsp--missing-message (car command))))
    command))

;;; Installing the server

(defvar agent-lsp--install-result nil
  "How the last \\[agent-lsp-install] ended: `ok', or the message of its failure.")

(defun agent-lsp--source-argument (source)
  "SOURCE expanded when it names a file (a wheel), else as it is (a name)."
  (if (file-exists-p (expand-file-name source)) (expand-file-name source) source))

(defun agent-lsp--installed-program ()
  "The server \\[agent-lsp-install] installed, or nil."
  (let ((program (expand-file-name "bin/agent-lsp" agent-lsp-install-directory)))
    (and (file-executable-p program) program)))

(defun agent-lsp--find-python ()
  "The first Python 3.11 or newer on the PATH, or nil."
  (cl-loop for name in '("python3" "python3.13" "python3.12" "python3.11")
           for program = (executable-find name)
           when (and program
                     (eq 0 (call-process program nil nil nil "-c"
                                         "import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)")))
           return program))

(defun agent-lsp--run-steps (steps done)
  "Run STEPS, a list of (LABEL . ARGV), one after the other, in the background.
Call DONE with nil when all succeeded, else with what failed and its
output."
  (if (null steps)
      (funcall done nil)
    (let ((buffer (generate-new-buffer " *agent-lsp-install*")))
      (message "agent-lsp: %s…" (caar steps))
      (make-process :name "agent-lsp-install" :buffer buffer :command (cdar steps) :noquery t
                    :sentinel (lambda (process _event)
                                (unless (process-live-p process)
                                  (let ((output (with-current-buffer buffer (string-trim (buffer-string)))))
                                    (kill-buffer buffer)
                                    (if (eq 0 (process-exit-status process))
                                        (agent-lsp--run-steps (cdr steps) done)
                                      (funcall done (format "%s failed: %s" (caar steps) output))))))))))

;;;###autoload
(defun agent-lsp-install (&optional source)
  "Install the server into its own virtual environment.
The environment is `agent-lsp-install-directory'; SOURCE (interactively,
with a prefix argument, a wheel file to choose) defaults to
`agent-lsp-install-source'.  Runs in the background; the default
`agent-lsp-command' then finds the server there."
  (interactive (list (when current-prefix-arg (read-file-name "agent-lsp wheel: " nil nil t))))
  (let ((python (agent-lsp--find-python))
        (source (agent-lsp--source-argument (or source agent-lsp-install-source)))
        (venv (expand-file-name agent-lsp-install-directory)))
    (unless python
      (user-error "agent-lsp needs Python 3.11 or newer on the PATH (e.g. apt install python3.11)"))
    (setq agent-lsp--install-result nil)
    (agent-lsp--run-steps
     `(("making a virtual environment" ,python "-m" "venv" ,venv)
       (,(format "installing %s" (file-name-nondirectory source))
        ,(expand-file-name "bin/python" venv) "-m" "pip" "install" "--quiet" "--disable-pip-version-check"
        "--upgrade" ,source))
     (lambda (failure)
       (setq agent-lsp--install-result (or failure 'ok))
       (if failure
           (message "agent-lsp: %s" failure)
         (message "agent-lsp: installed in %s; M-x agent-lsp-mode starts it" venv))))))


(defun agent-lsp--identity-error (conn)
  "Nil when CONN's server is agent-lsp with protocol 1 or later; else the message."
  (let* ((info (agent-lsp--info conn))
         (agent (plist-get (plist-get (agent-lsp--capabilities conn) :experimental) :agent))
         (name (plist-get info :name))
         (protocol (plist-get agent :protocolVersion)))
    (unless (and (equal name "agent-lsp-server") (numberp protocol) (>= protocol 1))
      (format (concat "`%s' is not agent-lsp (it reports `%s %s, protocol %s').  "
                      "Install agent-lsp with %s and set `agent-lsp-command' to its path.")
              (string-join agent-lsp-command " ") (or name "no serverInfo.name")
              (or (plist-get info :version) "") (or protocol "none") agent-lsp--install))))

;;; Positions and URIs (UTF-16 columns: what the connection negotiates, and what eglot and lsp-mode speak)

(defun agent-lsp--utf-16-length (string)
  "The length of STRING in UTF-16 code units, as LSP counts."
  (/ (length (encode-coding-string string 'utf-16le)) 2))

(defun agent-lsp--position (&optional pos)
  "POS (default point) as an LSP position."
  (save-excursion
    (save-restriction
      (widen)
      (when pos (goto-char pos))
      (list :line (1- (line-number-at-pos nil t))
            :character (agent-lsp--utf-16-length (buffer-substring-no-properties (line-beginning-position)
                                                                                 (point)))))))

(defun agent-lsp--point (position)
  "The buffer position of the LSP POSITION, within the buffer."
  (save-excursion
    (save-restriction
      (widen)
      (goto-char (point-min))
      (forward-line (plist-get position :line))
      (let ((units (plist-get position :character)) (end (line-end-position)))
        (while (and (> units 0) (< (point) end))
          (setq units (- units (if (> (char-after) #xFFFF) 2 1)))
          (forward-char 1))
        (point)))))

(defun agent-lsp--uri (file)
  "FILE as a file:// URI."
  (let ((path (expand-file-name file)))
    (concat "file://" (if (string-prefix-p "/" path) "" "/") (url-hexify-string path url-path-allowed-chars))))

(defun agent-lsp--uri-path (uri)
  "The file of the file:// URI."
  (let ((path (decode-coding-string (url-unhex-string (url-filename (url-generic-parse-url uri))) 'utf-8)))
    (if (string-match-p "\\`/[A-Za-z]:" path) (substring path 1) path)))

(defun agent-lsp--get (object key)
  "KEY (a keyword) of OBJECT, a plist or a hash table (lsp-mode's default)."
  (if (hash-table-p object) (gethash (substring (symbol-name key) 1) object) (plist-get object key)))

(defun agent-lsp--document ()
  "This buffer's TextDocumentIdentifier."
  (list :uri (agent-lsp--uri buffer-file-name)))

;;; The buffer's own language server (eglot's or lsp-mode's): agent-lsp's language tools ask it

(defconst agent-lsp--language-methods
  '(("textDocument/definition" :definitionProvider) ("textDocument/typeDefinition" :typeDefinitionProvider)
    ("textDocument/implementation" :implementationProvider) ("textDocument/references" :referencesProvider)
    ("textDocument/hover" :hoverProvider) ("textDocument/documentSymbol" :documentSymbolProvider)
    ("workspace/symbol" :workspaceSymbolProvider) ("textDocument/prepareCallHierarchy" :callHierarchyProvider)
    ("callHierarchy/incomingCalls" :callHierarchyProvider) ("callHierarchy/outgoingCalls" :callHierarchyProvider)
    ("textDocument/prepareRename" :renameProvider :prepareProvider) ("textDocument/rename" :renameProvider))
  "The language methods agent-lsp asks the editor (PROTOCOL §9).
Each with the server capability behind it.")

(defun agent-lsp--editor-server (&optional buffer)
  "BUFFER's own language server: (eglot . SERVER), (lsp-mode . BUFFER), or nil."
  (with-current-buffer (or buffer (current-buffer))
    (cond ((and (fboundp 'eglot-current-server) (eglot-current-server))
           (cons 'eglot (eglot-current-server)))
          ((and (bound-and-true-p lsp-mode) (lsp-workspaces))
           (cons 'lsp-mode (current-buffer))))))

(defun agent-lsp--editor-capability (server key)
  "The capability KEY of SERVER, an `agent-lsp--editor-server'."
  (pcase (car server)
    ;; eglot 1.9 has no public reader of the server's capabilities (eglot-server-capable is 1.16+)
    ('eglot (plist-get (eglot--capabilities (cdr server)) key))
    ('lsp-mode (with-current-buffer (cdr server) (lsp--capability key)))))

(defun agent-lsp--editor-methods (server)
  "The language methods SERVER, an `agent-lsp--editor-server', answers."
  (when server
    (cl-loop for (method key inner) in agent-lsp--language-methods
             for value = (agent-lsp--editor-capability server key)
             when (and value (not (eq value :json-false))
                       (or (not inner) (let ((v (agent-lsp--get value inner))) (and v (not (eq v :json-false))))))
             collect method)))

(defun agent-lsp--editor-buffer (conn params)
  "The buffer of CONN whose language server answers PARAMS.
Its document's, else any with a language server."
  (let* ((doc (or (plist-get params :textDocument) (plist-get params :item)))
         (file (and (stringp (plist-get doc :uri)) (agent-lsp--uri-path (plist-get doc :uri))))
         (visiting (and file (find-buffer-visiting file))))
    (or (and visiting (agent-lsp--editor-server visiting) visiting)
        (cl-find-if #'agent-lsp--editor-server (agent-lsp--live-buffers conn)))))

(defun agent-lsp--ask-editor (server method params)
  "METHOD with PARAMS, asked of SERVER in the current buffer.
SERVER is an `agent-lsp--editor-server'."
  (pcase (car server)
    ('eglot (jsonrpc-request (cdr server) (intern method) params :timeout 20))
    ('lsp-mode (lsp-request method params))))

(defun agent-lsp--places (locations)
  "The (URI LINE CHARACTER) each of LOCATIONS starts at.
LOCATIONS: Locations or LocationLinks, or one of them."
  (mapcar (lambda (l)
            (let ((start (agent-lsp--get (or (agent-lsp--get l :targetSelectionRange) (agent-lsp--get l :range))
                                         :start)))
              (list (or (agent-lsp--get l :targetUri) (agent-lsp--get l :uri))
                    (agent-lsp--get start :line) (agent-lsp--get start :character))))
          (if (or (vectorp locations) (and (listp locations) (not (keywordp (car-safe locations)))))
              (append locations nil)
            (list locations))))

(defun agent-lsp--language-feature (conn method params)
  "Answer agent/languageFeature on CONN: METHOD with PARAMS.
Asked of the editor's own language server for the buffer.  References
without their declaration leave out the definition's place, as some
servers (jedi-language-server) list it whatever the request says."
  (let* ((buffer (or (agent-lsp--editor-buffer conn params)
                     (jsonrpc-error :code -32603 :message "No buffer of this project has a language server")))
         (server (agent-lsp--editor-server buffer)))
    (with-current-buffer buffer
      (condition-case err
          (progn
            (when (eq (car server) 'eglot)
              ;; eglot sends changes after `eglot-send-changes-idle-time': the answer must reflect the buffers now
              (dolist (b (agent-lsp--live-buffers conn))
                (with-current-buffer b
                  (when (equal (agent-lsp--editor-server b) server) (eglot--signal-textDocument/didChange)))))
            (let ((answer (agent-lsp--ask-editor server method params)))
              (if (and answer (equal method "textDocument/references")
                       (eq (plist-get (plist-get params :context) :includeDeclaration) :json-false)
                       (member "textDocument/definition" (agent-lsp--editor-methods server)))
                  (let ((declared (agent-lsp--places
                                   (agent-lsp--ask-editor server "textDocument/definition"
                                                          (list :textDocument (plist-get params :textDocument)
                                                                :position (plist-get params :position))))))
                    (vconcat (cl-remove-if (lambda (l) (member (car (agent-lsp--places l)) declared))
                                           (append answer nil))))
                answer)))
        (jsonrpc-error
         (jsonrpc-error :code -32603
                        :message (format "%s: %s" method (or (alist-get 'jsonrpc-error-message (cdr err)) err))))
        (error (jsonrpc-error :code -32603 :message (format "%s: %s" method (error-message-string err))))))))

;;; The connection, one per project

(defun agent-lsp--project-root ()
  "The root directory of this buffer's project."
  (let ((project (project-current)))
    (file-name-as-directory (expand-file-name (if project (project-root project) default-directory)))))

(defun agent-lsp--live-buffers (conn)
  "The live buffers CONN is fed."
  (setf (agent-lsp--buffers conn) (cl-remove-if-not #'buffer-live-p (agent-lsp--buffers conn))))

(defun agent-lsp--client-capabilities (methods)
  "The client's capabilities; METHODS are the language methods the editor answers."
  (list :general (list :positionEncodings ["utf-16"])
        :workspace (list :applyEdit t :configuration t :workspaceFolders t
                         :workspaceEdit (list :documentChanges t :resourceOperations ["create"]))
        :textDocument (list :synchronization (list :didSave :json-false)
                            :inlineCompletion (list :dynamicRegistration :json-false)
                            :codeAction (list :dynamicRegistration :json-false))
        :window (list :showDocument (list :support t) :workDoneProgress :json-false)
        ;; Confirmations are asked here (agent/confirmTool); languageFeatures only with a server to ask.
        :experimental (list :agent (append (list :confirmTool t)
                                           (and methods (list :languageFeatures (vconcat methods)))))))

(defun agent-lsp--start (root)
  "Start agent-lsp for the project at ROOT; return its connection, initialized."
  (let* ((command (agent-lsp-server-command))
         (methods (agent-lsp--editor-methods (agent-lsp--editor-server)))
         (default-directory root)
         (name (format "agent-lsp %s" (abbreviate-file-name root)))
         (conn (make-instance
                'agent-lsp-connection
                :name name :root root :methods methods
                :request-dispatcher #'agent-lsp--handle-request
                :notification-dispatcher #'agent-lsp--handle-notification
                :on-shutdown (lambda (c) (remhash (agent-lsp--root c) agent-lsp--connections))
                :process (make-process :name name :command command :connection-type 'pipe
                                       :coding 'utf-8-emacs-unix :noquery t
                                       :stderr (get-buffer-create (format " *%s stderr*" name)))))
         (result (jsonrpc-request conn :initialize
                                  (list :processId (emacs-pid) :clientInfo (list :name "agent-lsp.el")
                                        :rootUri (agent-lsp--uri root) :rootPath root
                                        :workspaceFolders (vector (list :uri (agent-lsp--uri root)
                                                                        :name (file-name-nondirectory
                                                                               (directory-file-name root))))
                                        :initializationOptions (or agent-lsp-settings (make-hash-table))
                                        :capabilities (agent-lsp--client-capabilities methods))
                                  :timeout 60)))
    (setf (agent-lsp--capabilities conn) (plist-get result :capabilities)
          (agent-lsp--info conn) (plist-get result :serverInfo))
    (let ((wrong (agent-lsp--identity-error conn)))
      (when wrong
        (jsonrpc-shutdown conn)
        (display-warning 'agent-lsp wrong :error)
        (user-error "%s" wrong)))
    (jsonrpc-notify conn :initialized (make-hash-table))
    (puthash root conn agent-lsp--connections)
    conn))

(defun agent-lsp--restart-with-editor-server ()
  "Restart this buffer's agent-lsp when its own language server came after it.
agent-lsp learns which language methods the editor answers only when it
starts; the chat's session goes on after the restart.  Out of the
language server's own connect hook, which goes on with the buffer."
  (run-at-time 0 nil #'agent-lsp--restart (current-buffer)))

(defun agent-lsp--restart (buffer)
  "Restart BUFFER's agent-lsp to declare the language methods of BUFFER's server.
Only when it declared none, and no chat of it runs."
  (when (buffer-live-p buffer)
    (with-current-buffer buffer
      (let ((conn agent-lsp--connection))
        (when (and conn (jsonrpc-running-p conn) (null (agent-lsp--methods conn))
                   (agent-lsp--editor-methods (agent-lsp--editor-server))
                   (not (and agent-lsp--busy (eq conn agent-lsp--server))))
          (let ((buffers (agent-lsp--live-buffers conn)))
            (agent-lsp--shutdown conn)
            (dolist (b (cons buffer (delq buffer buffers)))  ; this buffer first: its server is declared
              (with-current-buffer b (agent-lsp--open)))))))))

(defun agent-lsp--shutdown (conn)
  "Shut CONN down (shutdown, then exit); its buffers are no longer fed."
  (remhash (agent-lsp--root conn) agent-lsp--connections)
  (dolist (b (agent-lsp--live-buffers conn))
    (with-current-buffer b (setq agent-lsp--connection nil)))
  (when (jsonrpc-running-p conn)
    (ignore-errors (jsonrpc-request conn :shutdown nil :timeout 15))
    (ignore-errors (jsonrpc-notify conn :exit nil))
    (with-timeout (2 nil)                ; a server that does not exit on `exit' is killed after that
      (while (jsonrpc-running-p conn) (accept-process-output nil 0.05)))
    (jsonrpc-shutdown conn t)))

;;;###autoload
(defun agent-lsp-shutdown-all ()
  "Stop every agent-lsp server Emacs started."
  (interactive)
  (dolist (conn (hash-table-values agent-lsp--connections))
    (agent-lsp--shutdown conn)))

;;; Feeding the buffers

(defun agent-lsp--language-id ()
  "This buffer's languageId, from its major mode."
  (string-remove-suffix "-ts" (string-remove-suffix "-mode" (symbol-name major-mode))))

(defun agent-lsp--open ()
  "Feed this buffer to its project's connection (textDocument/didOpen).
The connection starts when needed."
  (let* ((root (agent-lsp--project-root))
         (conn (let ((c (gethash root agent-lsp--connections)))
                 (if (and c (jsonrpc-running-p c)) c (agent-lsp--start root)))))
    (setq agent-lsp--connection conn agent-lsp--version 0 agent-lsp--dirty nil)
    (cl-pushnew (current-buffer) (agent-lsp--buffers conn))
    (jsonrpc-notify conn :textDocument/didOpen
                    (list :textDocument (list :uri (agent-lsp--uri buffer-file-name)
                                              :languageId (agent-lsp--language-id) :version 0
                                              :text (save-restriction (widen) (buffer-substring-no-properties
                                                                              (point-min) (point-max))))))))

(defun agent-lsp--close ()
  "Stop feeding this buffer (textDocument/didClose)."
  (let ((conn agent-lsp--connection))
    (when conn
      (setf (agent-lsp--buffers conn) (delq (current-buffer) (agent-lsp--buffers conn)))
      (setq agent-lsp--connection nil)
      (when (jsonrpc-running-p conn)
        (jsonrpc-notify conn :textDocument/didClose (list :textDocument (agent-lsp--document)))))))

(defun agent-lsp--changed (&rest _)
  "After a change: mark the buffer, and send it once Emacs is idle."
  (setq agent-lsp--dirty t)
  (unless agent-lsp--sync-timer
    (setq agent-lsp--sync-timer (run-with-idle-timer agent-lsp-sync-delay nil #'agent-lsp--flush-all))))

(defun agent-lsp--flush ()
  "Send this buffer's text to the server if it changed.
textDocument/didChange with the whole text."
  (when (and agent-lsp--dirty agent-lsp--connection (jsonrpc-running-p agent-lsp--connection))
    (setq agent-lsp--dirty nil)
    (jsonrpc-notify agent-lsp--connection :textDocument/didChange
                    (list :textDocument (list :uri (agent-lsp--uri buffer-file-name)
                                              :version (cl-incf agent-lsp--version))
                          :contentChanges (vector (list :text (save-restriction
                                                                (widen)
                                                                (buffer-substring-no-properties
                                                                 (point-min) (point-max)))))))))

(defun agent-lsp--flush-all (&optional conn)
  "Send the changes of CONN's buffers (default: every connection's)."
  (setq agent-lsp--sync-timer nil)
  (dolist (c (if conn (list conn) (hash-table-values agent-lsp--connections)))
    (dolist (b (agent-lsp--live-buffers c))
      (with-current-buffer b (agent-lsp--flush)))))

;;;###autoload
(define-minor-mode agent-lsp-mode
  "Feed this buffer to agent-lsp, beside its own language server.
Starts the project's agent-lsp when needed; suggestions as you type
follow (`agent-lsp-suggestions')."
  :lighter " agent"
  (cond
   ((not agent-lsp-mode)
    (remove-hook 'after-change-functions #'agent-lsp--changed t)
    (remove-hook 'kill-buffer-hook #'agent-lsp--close t)
    (remove-hook 'before-revert-hook #'agent-lsp--close t)
    (remove-hook 'after-revert-hook #'agent-lsp--open t)
    (when agent-lsp-suggestion-mode (agent-lsp-suggestion-mode -1))
    (agent-lsp--close))
   ((not buffer-file-name)
    (setq agent-lsp-mode nil)
    (message "agent-lsp: only a buffer visiting a file can be fed to agent-lsp"))
   (t
    (condition-case err
        (agent-lsp--open)
      (error (setq agent-lsp-mode nil)
             (signal (car err) (cdr err))))
    (add-hook 'after-change-functions #'agent-lsp--changed nil t)
    (add-hook 'kill-buffer-hook #'agent-lsp--close nil t)
    (add-hook 'before-revert-hook #'agent-lsp--close nil t)
    (add-hook 'after-revert-hook #'agent-lsp--open nil t)
    ;; The buffer's own server connecting after agent-lsp started: agent-lsp may now ask it.
    (add-hook 'eglot-managed-mode-hook #'agent-lsp--restart-with-editor-server)
    (add-hook 'lsp-after-open-hook #'agent-lsp--restart-with-editor-server)
    (when agent-lsp-suggestions (agent-lsp-suggestion-mode 1)))))

(defun agent-lsp--turn-on ()
  "Turn `agent-lsp-mode' on in a file buffer of one of `agent-lsp-modes'.
A server that cannot start is a message: the file is visited all the same."
  (when (and buffer-file-name (apply #'derived-mode-p agent-lsp-modes))
    (condition-case err
        (agent-lsp-mode 1)
      (error (message "agent-lsp: %s" (error-message-string err))))))

;;;###autoload
(define-globalized-minor-mode agent-lsp-global-mode agent-lsp-mode agent-lsp--turn-on
  :group 'agent-lsp)

;;; Requests to the server

(defun agent-lsp--request (conn method params)
  "Send METHOD with PARAMS to CONN and wait for the answer.
C-g while waiting tells the server to drop it ($/cancelRequest)."
  (agent-lsp--flush-all conn)
  (let* ((done nil) (answer nil)
         ;; jsonrpc 1.0.14's public requests return no id to cancel with: its own request function gives it
         (id (car (jsonrpc--async-request-1
                   conn method params :timeout nil
                   :success-fn (lambda (result) (setq done 'ok answer result))
                   :error-fn (lambda (err) (setq done 'error answer err))))))
    (unwind-protect
        (while (not done) (accept-process-output nil 0.05))
      (unless done
        (remhash id (jsonrpc--request-continuations conn))
        (when (jsonrpc-running-p conn)
          (jsonrpc-notify conn :$/cancelRequest (list :id id)))))
    (if (eq done 'error)
        (error "agent-lsp: %s: %s" method (plist-get answer :message))
      answer)))

(defun agent-lsp--async-request (conn method params &rest args)
  "Send METHOD with PARAMS to CONN, after its buffers' changes.
ARGS as `jsonrpc-async-request''s.  Return the request's id."
  (agent-lsp--flush-all conn)
  ;; jsonrpc 1.0.14's public requests return no id to cancel with: its own request function gives it
  (car (apply #'jsonrpc--async-request-1 conn method params args)))

(defun agent-lsp--cancel (conn id)
  "Tell CONN the request ID is no longer wanted, and drop its answer."
  (when (and id (jsonrpc-running-p conn))
    (remhash id (jsonrpc--request-continuations conn))
    (jsonrpc-notify conn :$/cancelRequest (list :id id))))

;;; Requests and notifications from the server

(defun agent-lsp--handle-request (conn method params)
  "Answer the server's request METHOD with PARAMS on CONN."
  (pcase method
    ('workspace/applyEdit (agent-lsp--apply-edit (plist-get params :edit)))
    ('agent/languageFeature
     (let ((asked (plist-get params :method)))
       (unless (member asked (agent-lsp--methods conn))
         (jsonrpc-error :code -32602 :message (format "Invalid params: method: %s was not declared" asked)))
       (agent-lsp--language-feature conn asked (plist-get params :params))))
    ('workspace/configuration
     (vconcat (mapcar (lambda (item)
                        (if (equal (plist-get item :section) "agentLsp") (or agent-lsp-settings (make-hash-table)) nil))
                      (plist-get params :items))))
    ('window/showMessageRequest
     (let* ((actions (append (plist-get params :actions) nil))
            (title (and actions (condition-case nil
                                    (completing-read (concat "agent-lsp: " (plist-get params :message) " ")
                                                     (mapcar (lambda (a) (plist-get a :title)) actions) nil t)
                                  (quit nil)))))
       (cl-find title actions :key (lambda (a) (plist-get a :title)) :test #'equal)))
    ('window/showDocument
     (let ((file (agent-lsp--uri-path (plist-get params :uri))))
       (if (string-prefix-p "file:" (plist-get params :uri))
           (display-buffer (find-file-noselect file))
         (browse-url (plist-get params :uri)))
       (list :success t)))
    ((or 'window/workDoneProgress/create 'client/registerCapability 'client/unregisterCapability) nil)
    (_ (jsonrpc-error :code -32601 :message (format "Unknown request method %s" method)))))

(defun agent-lsp--handle-notification (conn method params)
  "Handle the server's notification METHOD with PARAMS on CONN."
  (pcase method
    ('agent/update (agent-lsp--update conn (plist-get params :sessionId) (plist-get params :update)))
    ('window/showMessage
     (when (<= (or (plist-get params :type) 4) 3)
       (message "agent-lsp: %s" (plist-get params :message))))))

;;; Applying the server's edits

(defun agent-lsp--apply-text-edits (edits)
  "Apply the LSP text EDITS (a vector) to this buffer, last first."
  (let ((regions (mapcar (lambda (e)
                           (let ((range (plist-get e :range)))
                             (list (copy-marker (agent-lsp--point (plist-get range :start)))
                                   (copy-marker (agent-lsp--point (plist-get range :end)) t)
                                   (plist-get e :newText))))
                         edits)))
    (save-excursion
      (save-restriction
        (widen)
        (atomic-change-group
          (dolist (r (reverse regions))
            (goto-char (nth 0 r))
            (delete-region (nth 0 r) (nth 1 r))
            (insert (nth 2 r))))))))

(defun agent-lsp--apply-edit (edit)
  "Apply the WorkspaceEdit EDIT to the buffers.
A file is visited when needed, never saved.  Return the answer to
workspace/applyEdit.  The user answered the agent's own question about
it already."
  (condition-case err
      (let ((changes (or (append (plist-get edit :documentChanges) nil)
                         (cl-loop for (uri edits) on (plist-get edit :changes) by #'cddr
                                  collect (list :textDocument (list :uri (substring (symbol-name uri) 1))
                                                :edits edits))))
            (touched nil))
        (dolist (change changes)
          (let* ((kind (plist-get change :kind))
                 (uri (or (plist-get change :uri) (plist-get (plist-get change :textDocument) :uri)))
                 (file (agent-lsp--uri-path uri))
                 (buffer (or (find-buffer-visiting file)
                             (progn (make-directory (file-name-directory file) t)
                                    (find-file-noselect file)))))
            (with-current-buffer buffer
              (let ((version (plist-get (plist-get change :textDocument) :version)))
                (when (and (numberp version) agent-lsp--connection
                           (or agent-lsp--dirty (/= version agent-lsp--version)))
                  (error "%s changed since the agent read it" (file-name-nondirectory file))))
              (unless (equal kind "create")
                (agent-lsp--apply-text-edits (plist-get change :edits)))
              (unless agent-lsp--connection (agent-lsp-mode 1))
              (cl-pushnew buffer touched))))
        ;; The server waits for each edit's didChange
        (dolist (b touched) (with-current-buffer b (agent-lsp--flush)))
        (list :applied t))
    (error (list :applied :json-false :failureReason (error-message-string err)))))
;;; The transcript

(defun agent-lsp--buffer ()
  "The *agent-lsp* transcript buffer, in markdown-mode when installed."
  (or (get-buffer "*agent-lsp*")
      (with-current-buffer (get-buffer-create "*agent-lsp*")
        (if (require 'markdown-mode nil t) (funcall 'markdown-mode) (text-mode))
        (setq buffer-read-only t)
        (current-buffer))))

(defun agent-lsp--insert (&rest strings)
  "Append STRINGS to the transcript; windows that showed its end keep following it."
  (with-current-buffer (agent-lsp--buffer)
    (let* ((inhibit-read-only t)
           (end (point-max))
           (following (cl-remove-if-not (lambda (w) (= (window-point w) end))
                                        (get-buffer-window-list (current-buffer) nil t))))
      (save-excursion
        (goto-char end)
        (apply #'insert strings))
      (dolist (w following)
        (set-window-point w (point-max))))))

(defun agent-lsp--line (&rest strings)
  "Append STRINGS as a line of their own; return a marker at its start."
  (with-current-buffer (agent-lsp--buffer)
    (unless (or (= (point-min) (point-max)) (eq (char-before (point-max)) ?\n))
      (agent-lsp--insert "\n"))
    (let ((start (copy-marker (point-max))))
      (apply #'agent-lsp--insert (append strings '("\n")))
      start)))

(defun agent-lsp--set-line (marker &rest strings)
  "Replace the line at MARKER with STRINGS."
  (with-current-buffer (marker-buffer marker)
    (let ((inhibit-read-only t))
      (save-excursion
        (goto-char marker)
        (delete-region (point) (line-end-position))
        (apply #'insert strings)
        (set-marker marker (line-beginning-position))))))

(defconst agent-lsp--stop-reasons
  '(("end_turn" . "Done.") ("aborted" . "Stopped.") ("max_turns" . "Turn limit reached.")
    ("max_tokens" . "Token limit reached.") ("refusal" . "The model refused.")
    ("disabled" . "Chat disabled (maxTurns is 0)."))
  "How each stopReason is written for people.")

(defun agent-lsp--stop-line (result)
  "The closing line of a chat's RESULT."
  (let ((reason (plist-get result :stopReason)))
    (if (equal reason "error")
        (concat "Error: " (plist-get (plist-get result :error) :message))
      (or (cdr (assoc reason agent-lsp--stop-reasons)) reason))))

(defun agent-lsp--tool-line (title status &optional nested)
  "A tool call's line: TITLE and STATUS; indented when NESTED (a subagent's)."
  (format "%s● %s [%s]" (if nested "  " "") title (replace-regexp-in-string "_" " " status)))

(defconst agent-lsp--plan-boxes
  '(("completed" . "[x]") ("in_progress" . "[~]") ("pending" . "[ ]"))
  "The checkbox of each plan entry status.")

(defun agent-lsp--plan-text (entries)
  "The plan block for ENTRIES (plists :content :status); \"\" when none."
  (if (null entries)
      ""
    (let ((done (cl-count-if (lambda (e) (equal (plist-get e :status) "completed")) entries)))
      (concat (format "Plan (%d/%d done)\n" done (length entries))
              (mapconcat (lambda (e)
                           (format "- %s %s\n"
                                   (or (cdr (assoc (plist-get e :status) agent-lsp--plan-boxes)) "[ ]")
                                   (replace-regexp-in-string "[ \t]*\n[ \t]*" " "
                                                             (or (plist-get e :content) ""))))
                         entries "")
              "\n"))))

(defun agent-lsp--show-plan (entries)
  "Show the plan ENTRIES at the top of *agent-lsp*, in place of the one shown."
  (with-current-buffer (agent-lsp--buffer)
    (let ((inhibit-read-only t))
      (save-excursion
        (goto-char (point-min))
        (when agent-lsp--plan-end
          (delete-region (point-min) agent-lsp--plan-end))
        (insert (agent-lsp--plan-text entries))
        (setq agent-lsp--plan-end (and entries (copy-marker (point))))))))

(defun agent-lsp--nested-update (update parent)
  "Draw UPDATE of a subagent, under its task's line PARENT: its tool calls only.
Its text is the task's result, not the chat's."
  (pcase (plist-get update :kind)
    ("tool_call"
     (push (cons (plist-get update :toolCallId)
                 (cons (plist-get update :title)
                       (agent-lsp--line (agent-lsp--tool-line (plist-get update :title) "pending" t))))
           agent-lsp--tools))
    ("tool_call_update"
     (let ((tool (cdr (assoc (plist-get update :toolCallId) agent-lsp--tools))))
       (when tool
         (agent-lsp--set-line (cdr tool) (agent-lsp--tool-line (car tool) (plist-get update :status) t))))))
  parent)

(defun agent-lsp--update (server sessionId update)
  "Draw UPDATE, one streamed update of the chat SESSIONID on SERVER."
  (when (and agent-lsp--busy (eq server agent-lsp--server))
    (setq agent-lsp--session (or agent-lsp--session sessionId))  ; a new session's id comes first here
    (pcase (if (stringp (plist-get update :parentToolCallId)) "nested" (plist-get update :kind))
      ("nested" (let ((parent (assoc (plist-get update :parentToolCallId) agent-lsp--tools)))
                  (when parent (agent-lsp--nested-update update parent))))
      ("plan" (agent-lsp--show-plan (append (plist-get update :entries) nil)))
      ("text_delta" (agent-lsp--insert (plist-get update :text)))
      ("tool_call"
       (push (cons (plist-get update :toolCallId)
                   (cons (plist-get update :title)
                         (agent-lsp--line (agent-lsp--tool-line (plist-get update :title) "pending"))))
             agent-lsp--tools))
      ("tool_call_update"
       (let ((tool (cdr (assoc (plist-get update :toolCallId) agent-lsp--tools))))
         (when tool
           (agent-lsp--set-line (cdr tool) (agent-lsp--tool-line (car tool) (plist-get update :status))))))
      ("confirmation_request"
       (let ((diff (plist-get update :diff)))
         (when (stringp diff)
           (agent-lsp--line "```diff\n" (string-trim-right diff) "\n```")))
       ;; Out of the process filter: the question waits for the user, and must be quittable.
       (run-at-time 0 nil #'agent-lsp--confirm server sessionId update))
      ("notice" (agent-lsp--line "! " (plist-get update :message))))))

;;; Confirmations

(defconst agent-lsp--choices
  '(("Allow once" . "allow_once") ("Allow always" . "allow_always") ("Reject" . "reject_once"))
  "What the user is offered, and the agent/confirmTool decision of each.")

(defun agent-lsp--show-diff (diff title)
  "Show DIFF of the edit TITLE in the *agent-lsp-diff* buffer, in diff-mode."
  (with-current-buffer (get-buffer-create "*agent-lsp-diff*")
    (let ((inhibit-read-only t))
      (erase-buffer)
      (insert diff)
      (diff-mode)
      (setq header-line-format title)
      (setq buffer-read-only t)
      (goto-char (point-min))))
  (display-buffer "*agent-lsp-diff*"))

(defun agent-lsp--ask (update)
  "Ask the question of UPDATE; return the decision."
  (let* ((offered (append (plist-get update :options) nil))
         (choices (cl-remove-if-not (lambda (c) (member (cdr c) offered)) agent-lsp--choices))
         (answer (completing-read (format "agent-lsp: %s? " (plist-get update :title))
                                  (mapcar #'car choices) nil t)))
    (or (cdr (assoc answer choices)) "reject_once")))

(defun agent-lsp--confirm (server session update)
  "Ask about UPDATE (a confirmation_request of SESSION on SERVER); answer it.
The diff comes first; C-g at the question rejects the call, and the
chat goes on."
  (when agent-lsp--busy  ; a chat stopped meanwhile has dropped its question
    (let* ((diff (plist-get update :diff))
           (decision
            (condition-case nil
                (let ((inhibit-quit nil))  ; timers run with quitting inhibited
                  (when (stringp diff)
                    (agent-lsp--show-diff diff (plist-get update :title)))
                  (agent-lsp--ask update))
              (quit (setq quit-flag nil)
                    "reject_once"))))
      (when (get-buffer-window "*agent-lsp-diff*")
        (quit-window nil (get-buffer-window "*agent-lsp-diff*")))
      (jsonrpc-async-request server :agent/confirmTool
                             (list :sessionId session :toolCallId (plist-get update :toolCallId)
                                   :decision decision)
                             :success-fn #'ignore
                             :error-fn #'ignore))))  ; after a stop the server dropped the question

;;; Commands

(defun agent-lsp--current-server ()
  "The agent-lsp connection of this buffer, else the chat's; or a clear error."
  (cond ((and agent-lsp--connection (jsonrpc-running-p agent-lsp--connection)) agent-lsp--connection)
        ((and agent-lsp--server (jsonrpc-running-p agent-lsp--server)) agent-lsp--server)
        (t (user-error "No agent-lsp server: M-x agent-lsp-mode in a file of your project first"))))

(defun agent-lsp--finish (line)
  "End the running chat with the closing LINE."
  (setq agent-lsp--busy nil)
  (agent-lsp--line line))

;;;###autoload
(defun agent-lsp-chat (message)
  "Send MESSAGE to agent-lsp; the answer streams into the *agent-lsp* buffer.
A MESSAGE starting with /name runs that command of the server (TAB at
the prompt completes them).  Images attached with
`agent-lsp-attach-image' go with it."
  (interactive (list (agent-lsp--read-message "Ask agent-lsp: ")))
  (when agent-lsp--busy
    (user-error "A chat is running; M-x agent-lsp-stop stops it"))
  (let ((server (agent-lsp--current-server))
        (file (and (not (eq (current-buffer) (get-buffer "*agent-lsp*"))) buffer-file-name))
        (images (reverse agent-lsp--images)))
    (setq agent-lsp--server server agent-lsp--busy t agent-lsp--tools nil agent-lsp--images nil)
    (with-current-buffer (agent-lsp--buffer)
      (unless (= (point-min) (or agent-lsp--plan-end (point-min)) (point-max)) (agent-lsp--line "")))
    (agent-lsp--line "> " message)
    (dolist (image images)
      (agent-lsp--line "> [image: " (file-name-nondirectory (nth 0 image)) "]"))
    (display-buffer (agent-lsp--buffer))
    (agent-lsp--async-request             ; the agent reads what the user typed a moment ago too
     server :agent/chat
     (append (list :message message)
             (and images (list :images (vconcat (mapcar (lambda (i) (list :mimeType (nth 1 i) :data (nth 2 i)))
                                                        images))))
             (and agent-lsp--session (list :sessionId agent-lsp--session))
             (and agent-lsp-permission-mode (list :permissionMode agent-lsp-permission-mode))
             (and file (list :context (list :activeUri (agent-lsp--uri file)))))
     :success-fn (lambda (result)
                   (setq agent-lsp--session (plist-get result :sessionId))
                   (agent-lsp--finish (agent-lsp--stop-line result)))
     :error-fn (lambda (err) (agent-lsp--finish (concat "Error: " (plist-get err :message))))
     :timeout nil)))                     ; a chat takes as long as it takes: no 10 s default

;;;###autoload
(defun agent-lsp-stop ()
  "Stop the running chat."
  (interactive)
  (cond
   ((not agent-lsp--busy) (message "agent-lsp: no chat is running"))
   ((not agent-lsp--session) (message "agent-lsp: the chat has not started yet; try again in a moment"))
   (t
    (jsonrpc-async-request agent-lsp--server :agent/abort (list :sessionId agent-lsp--session)
                           :success-fn #'ignore))))

;;;###autoload
(defun agent-lsp-revert (&optional keep)
  "Undo the edits of the session's last chat (agent/revert).
With a numeric prefix argument KEEP, undo those of every chat after
the first KEEP.  A file changed since the agent edited it is left as
it is; the transcript says what was reverted and what was not."
  (interactive "P")
  (when agent-lsp--busy
    (user-error "A chat is running; M-x agent-lsp-stop stops it first"))
  (unless agent-lsp--session
    (user-error "Nothing to revert: no chat in this session yet"))
  (agent-lsp--async-request             ; compared with what the user sees now
   (agent-lsp--current-server) :agent/revert
   (append (list :sessionId agent-lsp--session)
           (and keep (list :toChat (prefix-numeric-value keep))))
   :success-fn
   (lambda (result)
     (let* ((name (lambda (uri) (file-relative-name (agent-lsp--uri-path uri))))
            (reverted (mapcar name (plist-get result :reverted)))
            (lines (cons (concat "Reverted: " (if reverted (string-join reverted ", ") "nothing"))
                         (mapcar (lambda (r) (format "Not reverted: %s (%s)" (funcall name (plist-get r :uri))
                                                     (plist-get r :reason)))
                                 (plist-get result :refused)))))
       (agent-lsp--line (string-join lines "\n"))
       (message "agent-lsp: %s" (string-join lines "; "))))
   :error-fn (lambda (err) (message "agent-lsp: revert: %s" (plist-get err :message)))))


;;;###autoload
(defun agent-lsp-code-action ()
  "Hand the line or the region to the agent: fix, explain or refactor it.
The server's code actions (textDocument/codeAction) for the region, or
for point; the one picked runs as a chat in *agent-lsp*."
  (interactive)
  (when agent-lsp--busy
    (user-error "A chat is running; M-x agent-lsp-stop stops it"))
  (let* ((server (agent-lsp--current-server))
         (range (list :start (agent-lsp--position (if (use-region-p) (region-beginning) (point)))
                      :end (agent-lsp--position (if (use-region-p) (region-end) (point)))))
         (actions (append (agent-lsp--request server :textDocument/codeAction
                                              (list :textDocument (agent-lsp--document) :range range
                                                    :context (list :diagnostics [])))
                          nil))
         (title (if actions
                    (completing-read "agent-lsp: " (mapcar (lambda (a) (plist-get a :title)) actions) nil t)
                  (user-error "agent-lsp has no action here")))
         (command (plist-get (cl-find title actions :key (lambda (a) (plist-get a :title)) :test #'equal)
                             :command)))
    (setq agent-lsp--server server agent-lsp--busy t agent-lsp--tools nil)
    (agent-lsp--line "> " title)
    (display-buffer (agent-lsp--buffer))
    (agent-lsp--async-request
     server :workspace/executeCommand (list :command (plist-get command :command)
                                            :arguments (plist-get command :arguments))
     :success-fn (lambda (result)
                   (setq agent-lsp--session (plist-get result :sessionId))
                   (agent-lsp--finish (agent-lsp--stop-line result)))
     :error-fn (lambda (err) (agent-lsp--finish (concat "Error: " (plist-get err :message))))
     :timeout nil)))

;;;###autoload
(defun agent-lsp-memory ()
  "Open the project memory the agent's `remember' tool keeps.
Where the server's settings in force place it (agent/memoryFile):
AGENTS.md at the project root, or with `\"memoryFile\": \"private\"' the
file under the server's data directory."
  (interactive)
  (let* ((answer (agent-lsp--request (agent-lsp--current-server) :agent/memoryFile (make-hash-table)))
         (uri (plist-get answer :uri))
         (private (eq (plist-get answer :private) t))
         (file (and (stringp uri) (agent-lsp--uri-path uri))))
    (cond ((not file)
           (message "agent-lsp: no project memory here (no workspace folder, or no data directory for a private one)"))
          ((and private (not (file-exists-p file)))
           (message "agent-lsp: the private memory file %s does not exist yet; the agent's remember tool creates it"
                    (abbreviate-file-name file)))
          (t (find-file-other-window file)))))

;;;###autoload
(defun agent-lsp-new-session ()
  "Start a new session with the next message."
  (interactive)
  (setq agent-lsp--session nil)
  (when agent-lsp--plan-end
    (agent-lsp--show-plan nil)))   ; the plan was the old session's

;;; Slash commands

(defun agent-lsp--commands (&optional server)
  "The commands of SERVER (agent/commands), then its skills (agent/skills).
A skill whose name a command takes is left out.  A list of plists
:name :description :argumentHint :source (and :skill t for a skill)."
  (let* ((server (or server (agent-lsp--current-server)))
         (commands (append (plist-get (agent-lsp--request server :agent/commands (make-hash-table)) :commands) nil))
         (features (plist-get (plist-get (plist-get (agent-lsp--capabilities server) :experimental) :agent) :features)))
    (append commands
            (when (cl-find "skills" features :test #'equal)
              (cl-loop for skill across (plist-get (agent-lsp--request server :agent/skills (make-hash-table)) :skills)
                       unless (cl-find (plist-get skill :name) commands
                                       :key (lambda (c) (plist-get c :name)) :test #'equal)
                       collect (append skill (list :skill t)))))))

(defun agent-lsp--annotation (commands)
  "An annotation function for the /names of COMMANDS: hint and description."
  (lambda (candidate)
    (let ((c (cl-find (substring candidate 1) commands
                      :key (lambda (c) (plist-get c :name)) :test #'equal)))
      (when c
        (concat (let ((hint (plist-get c :argumentHint))) (if (stringp hint) (concat " " hint) ""))
                "  " (or (plist-get c :description) "") " [" (or (plist-get c :source) "")
                (if (plist-get c :skill) " skill" "") "]")))))

(defun agent-lsp-completion-at-point ()
  "Complete a /command (or a skill) at the start of the message.
For `completion-at-point-functions'.
Its candidates are the server's agent/commands and agent/skills."
  (let ((here (point))
        (start (if (minibufferp) (minibuffer-prompt-end) (point-min))))
    (when (save-excursion (goto-char start) (looking-at "/[^ \t\n]*"))
      (let ((end (match-end 0)))
        (when (<= start here end)
          (let ((commands (condition-case e (agent-lsp--commands)
                            (error (message "agent-lsp: no commands: %s" (error-message-string e)) nil))))
            (list start end (mapcar (lambda (c) (concat "/" (plist-get c :name))) commands)
                  :annotation-function (agent-lsp--annotation commands)
                  :exclusive 'no)))))))

(defvar agent-lsp-message-map
  (let ((map (make-sparse-keymap)))
    (set-keymap-parent map minibuffer-local-map)
    (define-key map (kbd "TAB") #'completion-at-point)
    map)
  "The keymap of the message prompt: TAB completes /commands.")

(defun agent-lsp--read-message (prompt)
  "Read a message with PROMPT; TAB after a leading / completes commands."
  (minibuffer-with-setup-hook
      (lambda () (add-hook 'completion-at-point-functions #'agent-lsp-completion-at-point nil t))
    (read-from-minibuffer prompt nil agent-lsp-message-map)))

;;;###autoload
(defun agent-lsp-command-run (name arguments)
  "Run the server's command NAME with ARGUMENTS: the message \"/NAME ARGUMENTS\".
Interactively, pick it from agent/commands, then type its arguments."
  (interactive
   (let* ((commands (or (agent-lsp--commands) (user-error "The server offers no commands")))
          (completion-extra-properties (list :annotation-function (agent-lsp--annotation commands)))
          (name (string-remove-prefix
                 "/" (completing-read "agent-lsp command: "
                                      (mapcar (lambda (c) (concat "/" (plist-get c :name))) commands) nil t)))
          (command (cl-find name commands :key (lambda (c) (plist-get c :name)) :test #'equal))
          (hint (plist-get command :argumentHint)))
     (list name (read-string (format "/%s %s: " name (if (stringp hint) hint "arguments (none)"))))))
  (agent-lsp-chat (string-trim-right (concat "/" name " " arguments))))

;;; Images

(defconst agent-lsp--image-types
  '(("png" . "image/png") ("jpg" . "image/jpeg") ("jpeg" . "image/jpeg") ("gif" . "image/gif")
    ("webp" . "image/webp"))
  "The image types the server takes, by file extension.")

(defconst agent-lsp--image-max (* 5 1024 1024) "The largest image the server takes, in bytes.")

;;;###autoload
(defun agent-lsp-attach-image (file)
  "Attach the image FILE to the next message.
A png, jpg, gif or webp of at most 5 MiB, checked before anything is
sent; the transcript shows it under the message."
  (interactive "fAttach image: ")
  (let* ((file (expand-file-name file))
         (mime (cdr (assoc (downcase (or (file-name-extension file) "")) agent-lsp--image-types)))
         (size (file-attribute-size (file-attributes file))))
    (cond ((not mime)
           (user-error "%s is not an image agent-lsp can send (png, jpg, jpeg, gif or webp)"
                       (file-name-nondirectory file)))
          ((or (not size) (file-directory-p file))
           (user-error "%s: no such file" file))
          ((> size agent-lsp--image-max)
           (user-error "%s is %.1f MiB; an image can be at most 5 MiB" (file-name-nondirectory file)
                       (/ size 1048576.0))))
    (let ((data (with-temp-buffer
                  (set-buffer-multibyte nil)
                  (insert-file-contents-literally file)
                  (base64-encode-region (point-min) (point-max) t)
                  (buffer-string))))
      (push (list file mime data) agent-lsp--images)
      (message "agent-lsp: %s attached to the next message (%d in all)" (file-name-nondirectory file)
               (length agent-lsp--images)))))

;;; Suggestions as you type

(defcustom agent-lsp-suggestion-delay 0.2
  "Seconds of idle time after a change before a suggestion is asked for."
  :type 'number)

(defface agent-lsp-suggestion '((t :inherit shadow))
  "The suggestion's ghost text.")

(defvar-local agent-lsp--suggestion nil
  "The suggestion shown: a plist.
:overlay, :pos (a marker where the text left to insert starts), :text
\(that text), :replaces (how many characters after it the suggestion
replaces), :items (the server's items, a vector), :index, :server.")

(defvar-local agent-lsp--suggestion-shown nil
  "Non-nil while a suggestion is shown: `agent-lsp-suggestion-map' is on.")

(defvar-local agent-lsp--suggestion-asked 0
  "The number of the last request; the answer to an older one is dropped.")

(defvar-local agent-lsp--suggestion-request nil "The id of the request on its way, to cancel.")

(defvar-local agent-lsp--suggestion-timer nil "The idle timer of the next request.")

(defvar-local agent-lsp--suggestion-tick nil "`buffer-chars-modified-tick' after the last command.")

(defvar agent-lsp-suggestion-inhibit-functions nil
  "Functions of no argument asked before a suggestion is shown.
One that returns non-nil keeps it off the screen: a next edit shown
does (agent-lsp-next-edit.el).")

(defvar agent-lsp-suggestion-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "TAB") #'agent-lsp-suggestion-accept)
    (define-key map (kbd "<tab>") #'agent-lsp-suggestion-accept)
    (define-key map (kbd "M-<right>") #'agent-lsp-suggestion-accept-word)
    (define-key map (kbd "M-n") #'agent-lsp-suggestion-next)
    (define-key map (kbd "M-p") #'agent-lsp-suggestion-previous)
    (define-key map (kbd "C-g") #'agent-lsp-suggestion-dismiss)
    map)
  "The keys while a suggestion is shown, and only then.
TAB indents as usual otherwise.")

(add-to-list 'minor-mode-map-alist (cons 'agent-lsp--suggestion-shown agent-lsp-suggestion-map))

(define-minor-mode agent-lsp-suggestion-mode
  "Suggestions as you type, from agent-lsp (textDocument/inlineCompletion).
After `agent-lsp-suggestion-delay' seconds without typing, the
suggestion shows as ghost text after point; then
\\<agent-lsp-suggestion-map>\\[agent-lsp-suggestion-accept] accepts it, \\[agent-lsp-suggestion-accept-word] its next word, \\[agent-lsp-suggestion-next] and \\[agent-lsp-suggestion-previous] show
the others, \\[agent-lsp-suggestion-dismiss] dismisses it.  \\[agent-lsp-suggest] asks at once."
  :lighter nil
  (if agent-lsp-suggestion-mode
      (add-hook 'post-command-hook #'agent-lsp--suggestion-post-command nil t)
    (remove-hook 'post-command-hook #'agent-lsp--suggestion-post-command t)
    (agent-lsp-suggestion-dismiss)))

(defun agent-lsp--suggestion-clear ()
  "Take the suggestion off the screen."
  (when agent-lsp--suggestion
    (let ((ov (plist-get agent-lsp--suggestion :overlay)))
      (when ov (delete-overlay ov)))
    (set-marker (plist-get agent-lsp--suggestion :pos) nil))
  (setq agent-lsp--suggestion nil agent-lsp--suggestion-shown nil))

(defun agent-lsp--suggestion-draw ()
  "Draw the suggestion's text left to insert at its position.
Over what it replaces, if anything."
  (let* ((s agent-lsp--suggestion)
         (pos (marker-position (plist-get s :pos)))
         (ghost (propertize (plist-get s :text) 'face 'agent-lsp-suggestion))
         (old (plist-get s :overlay))
         (ov (make-overlay pos (+ pos (plist-get s :replaces)) nil t)))
    (when old (delete-overlay old))
    (put-text-property 0 1 'cursor t ghost)  ; the cursor stays before the ghost text
    (overlay-put ov 'window (selected-window))
    (overlay-put ov (if (= (plist-get s :replaces) 0) 'after-string 'display) ghost)
    (plist-put s :overlay ov)
    (setq agent-lsp--suggestion-shown t)))

(defun agent-lsp--suggestion-select (index)
  "Show item INDEX of the suggestion's items at point.
Nil when it does not fit there.  Tells the server
\(textDocument/didShowCompletion)."
  (let* ((s agent-lsp--suggestion)
         (item (aref (plist-get s :items) index))
         (text (plist-get item :insertText))
         (range (plist-get item :range))
         (region (if range
                     (cons (agent-lsp--point (plist-get range :start)) (agent-lsp--point (plist-get range :end)))
                   (cons (point) (point))))
         (retyped (and (<= (car region) (point) (cdr region))
                       (buffer-substring-no-properties (car region) (point)))))
    (when (and (stringp text) retyped (string-prefix-p retyped text) (> (length text) (length retyped)))
      (plist-put s :index index)
      (plist-put s :text (substring text (length retyped)))
      (plist-put s :replaces (- (cdr region) (point)))
      (set-marker (plist-get s :pos) (point))
      (agent-lsp--suggestion-draw)
      (jsonrpc-notify (plist-get s :server) :textDocument/didShowCompletion (list :item item))
      t)))

(defun agent-lsp--suggestion-answered (server result)
  "Show the first item of RESULT, SERVER's answer for point as it is."
  (let ((items (if (vectorp result) result (plist-get result :items))))
    (agent-lsp--suggestion-clear)
    (when (and (vectorp items) (> (length items) 0)
               (not (run-hook-with-args-until-success 'agent-lsp-suggestion-inhibit-functions)))
      (setq agent-lsp--suggestion (list :items items :server server :pos (point-marker)))
      (unless (cl-loop for i below (length items) thereis (agent-lsp--suggestion-select i))
        (agent-lsp--suggestion-clear)))))

(defun agent-lsp-suggest (&optional invoked)
  "Ask agent-lsp for suggestions at point and show the first.
INVOKED (interactively: always) asks as the user did, for up to three;
else as typing does, for one.  A newer request cancels the older one
\($/cancelRequest), whose answer is dropped."
  (interactive (list t))
  (let ((server agent-lsp--connection))
    (when (and server (jsonrpc-running-p server))
      (agent-lsp--cancel server agent-lsp--suggestion-request)
      (let ((asked (cl-incf agent-lsp--suggestion-asked))
            (buffer (current-buffer))
            (tick (buffer-chars-modified-tick))
            (pos (point)))
        (setq agent-lsp--suggestion-request
              (agent-lsp--async-request      ; after the buffer's changes: the server has the text as it is
               server :textDocument/inlineCompletion
               (list :textDocument (agent-lsp--document) :position (agent-lsp--position)
                     :context (list :triggerKind (if invoked 1 2)))
               :success-fn (lambda (result)
                             (when (buffer-live-p buffer)
                               (with-current-buffer buffer
                                 (setq agent-lsp--suggestion-request nil)
                                 (when (and (= asked agent-lsp--suggestion-asked)
                                            (= tick (buffer-chars-modified-tick)) (= pos (point)))
                                   (agent-lsp--suggestion-answered server result)))))
               :error-fn #'ignore
               :timeout-fn #'ignore))))))

(defun agent-lsp--suggestion-follow ()
  "After a command: keep the suggestion if what was typed is what it offers."
  (let* ((s agent-lsp--suggestion)
         (pos (plist-get s :pos))
         (text (plist-get s :text))
         (typed (and (<= pos (point) (line-end-position)) (>= pos (line-beginning-position))
                     (buffer-substring-no-properties pos (point)))))
    (if (and typed (string-prefix-p typed text) (< (length typed) (length text)))
        (progn
          (plist-put s :text (substring text (length typed)))
          (set-marker pos (point))
          (agent-lsp--suggestion-draw))
      (agent-lsp--suggestion-clear))))

(defun agent-lsp--suggestion-post-command ()
  "Follow typing; after a change, ask again once Emacs is idle."
  (let ((changed (not (eql agent-lsp--suggestion-tick (buffer-chars-modified-tick)))))
    (setq agent-lsp--suggestion-tick (buffer-chars-modified-tick))
    (when agent-lsp--suggestion
      (agent-lsp--suggestion-follow))
    (when agent-lsp--suggestion-timer
      (cancel-timer agent-lsp--suggestion-timer)
      (setq agent-lsp--suggestion-timer nil))
    (when changed
      (setq agent-lsp--suggestion-timer
            (run-with-idle-timer agent-lsp-suggestion-delay nil #'agent-lsp--suggestion-idle (current-buffer))))))

(defun agent-lsp--suggestion-idle (buffer)
  "Ask for a suggestion in BUFFER, when it is still the one being edited."
  (when (and (buffer-live-p buffer) (eq buffer (window-buffer (selected-window))))
    (with-current-buffer buffer
      (setq agent-lsp--suggestion-timer nil)
      (agent-lsp-suggest))))

(defun agent-lsp--suggestion-item ()
  "The item shown."
  (aref (plist-get agent-lsp--suggestion :items) (plist-get agent-lsp--suggestion :index)))

(defun agent-lsp--suggestion-run-command (server item)
  "Run ITEM's command on SERVER (workspace/executeCommand), if it has one."
  (let ((command (plist-get item :command)))
    (when (stringp (plist-get command :command))
      (jsonrpc-async-request server :workspace/executeCommand
                             (list :command (plist-get command :command)
                                   :arguments (or (plist-get command :arguments) []))
                             :success-fn #'ignore :error-fn #'ignore :timeout-fn #'ignore))))

(defun agent-lsp-suggestion-accept ()
  "Insert the suggestion shown, over what it replaces; then run its command."
  (interactive)
  (when agent-lsp--suggestion
    (let ((s agent-lsp--suggestion) (item (agent-lsp--suggestion-item)))
      (agent-lsp--suggestion-clear)
      (delete-region (point) (+ (point) (plist-get s :replaces)))
      (insert (plist-get s :text))
      (agent-lsp--suggestion-run-command (plist-get s :server) item))))

(defun agent-lsp-suggestion-accept-word ()
  "Insert the next word of the suggestion shown; the rest stays shown.
Tells the server (textDocument/didPartiallyAcceptCompletion)."
  (interactive)
  (when agent-lsp--suggestion
    (let* ((s agent-lsp--suggestion)
           (item (agent-lsp--suggestion-item))
           (text (plist-get s :text))
           (word (if (string-match "\\`[[:space:]\n]*\\(?:[[:word:]_]+\\|[^[:word:]_[:space:]\n]+\\)" text)
                     (match-string 0 text)
                   text))
           (whole (plist-get item :insertText)))
      (insert word)
      (jsonrpc-notify (plist-get s :server) :textDocument/didPartiallyAcceptCompletion
                      (list :item item :acceptedLength
                            (agent-lsp--utf-16-length
                             (substring whole 0 (+ (- (length whole) (length text)) (length word))))))
      (if (= (length word) (length text))
          (progn (agent-lsp--suggestion-clear)
                 (agent-lsp--suggestion-run-command (plist-get s :server) item))
        (plist-put s :text (substring text (length word)))
        (set-marker (plist-get s :pos) (point))
        (agent-lsp--suggestion-draw)))))

(defun agent-lsp--suggestion-cycle (step)
  "Show the suggestion STEP items away that fits point.
With no other, ask for more."
  (let* ((s agent-lsp--suggestion) (n (length (plist-get s :items))) (index (plist-get s :index)))
    (unless (cl-loop for i from 1 below n
                     thereis (agent-lsp--suggestion-select (mod (+ index (* i step)) n)))
      (agent-lsp-suggest t))))

(defun agent-lsp-suggestion-next ()
  "Show the next suggestion (with a single one, ask for more)."
  (interactive)
  (when agent-lsp--suggestion (agent-lsp--suggestion-cycle 1)))

(defun agent-lsp-suggestion-previous ()
  "Show the previous suggestion (with a single one, ask for more)."
  (interactive)
  (when agent-lsp--suggestion (agent-lsp--suggestion-cycle -1)))

(defun agent-lsp-suggestion-dismiss ()
  "Dismiss the suggestion shown; cancel a request on its way."
  (interactive)
  (cl-incf agent-lsp--suggestion-asked)
  (when agent-lsp--connection
    (agent-lsp--cancel agent-lsp--connection agent-lsp--suggestion-request))
  (setq agent-lsp--suggestion-request nil)
  (agent-lsp--suggestion-clear))

(provide 'agent-lsp)
;;; agent-lsp.el ends here
