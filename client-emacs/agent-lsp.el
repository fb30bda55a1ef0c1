;;; agent-lsp.el --- A coding agent's chat over agent-lsp, on top of eglot -*- lexical-binding: t; -*-

;; Version: 0.2.0
;; Package-Requires: ((emacs "28.1") (eglot "1.9"))
;; Keywords: tools, convenience

;;; Commentary:

;; agent-lsp runs a coding agent as a language server.  eglot already syncs the buffers (so the agent reads
;; unsaved text) and applies the agent's edits (workspace/applyEdit).  This package adds the chat:
;;
;;   M-x agent-lsp-chat         ask; the answer streams into *agent-lsp* (markdown-mode when installed)
;;   M-x agent-lsp-stop         stop the running chat
;;   M-x agent-lsp-new-session  the next message starts a new session
;;   M-x agent-lsp-revert       undo the last chat's edits (C-u N: those of the chats after the first N)
;;   M-x agent-lsp-memory       open the project memory (AGENTS.md, or the private memory file)
;;   M-x agent-lsp-command-run  run one of the server's /commands or skills (completing-read over both)
;;   M-x agent-lsp-attach-image attach an image (png, jpg, gif, webp; at most 5 MiB) to the next message
;;
;; While you type, `agent-lsp-suggestion-mode' (on in the buffers agent-lsp manages) shows the server's
;; suggestion as ghost text after point; TAB accepts it, M-<right> a word, M-n / M-p cycle, C-g dismisses.
;;
;; The agent's plan (its todo list) is a checklist at the top of *agent-lsp*; a subagent's tool calls are
;; indented under its task.  In the message prompt, TAB after a leading / completes the commands and skills.
;;
;; Before an edit or a command the agent asks once: an edit's diff is shown in a diff-mode buffer, then
;; Allow once / Allow always / Reject.  C-g at the question rejects, and the chat goes on.
;;
;; Setup: (require 'agent-lsp), then M-x eglot in a buffer of one of `agent-lsp-modes'.  Docs: docs/emacs.md.

;;; Code:

(require 'eglot)
(require 'cl-lib)
(require 'diff-mode)

(declare-function markdown-mode "markdown-mode")
(defvar eglot-confirm-server-edits)     ; eglot 1.16+

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
  "Major modes whose eglot server is agent-lsp.
eglot 1.9 runs one server per buffer: these modes lose their usual
language server."
  :type '(repeat symbol))

(defcustom agent-lsp-permission-mode nil
  "Permission mode of the chats; nil leaves it to the server's settings."
  :type '(choice (const :tag "The server's setting" nil)
                 (const "default") (const "acceptEdits") (const "plan") (const "bypassPermissions")))

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

(defclass agent-lsp-server (eglot-lsp-server) ()
  :documentation "The agent-lsp server: it asks its questions as `confirmation_request' updates.")

(defvar agent-lsp--server nil "The server of the chat.")
(defvar agent-lsp--session nil "The chat's session id: later messages continue it.")
(defvar agent-lsp--busy nil "Non-nil while a chat runs.")
(defvar agent-lsp--tools nil "Tool call id -> marker of its line in *agent-lsp*, for this chat.")
(defvar agent-lsp--plan-end nil "Marker at the end of the plan block at the top of *agent-lsp*, if one is shown.")
(defvar agent-lsp--images nil "Images for the next message: (FILE MIME-TYPE BASE64), in the order attached.")

;;; Finding and checking the server

(defun agent-lsp--missing-message (program)
  "The message for a PROGRAM that cannot be run."
  (format "agent-lsp was not found (`%s').  Install it with %s, or set `agent-lsp-command' to its full path."
          program agent-lsp--install))

;;;###autoload
(defun agent-lsp-contact (&optional _interactive)
  "The eglot contact for agent-lsp; a missing program is one clear error.
The default command, when `agent-lsp' is not on the PATH, is the server
\\[agent-lsp-install] installed."
  (let* ((installed (agent-lsp--installed-program))
         (command (if (and installed (equal agent-lsp-command '("agent-lsp")) (not (executable-find "agent-lsp")))
                      (list installed)
                    agent-lsp-command))
         (program (car command)))
    (unless (executable-find program)
      (user-error "%s" (agent-lsp--missing-message program)))
    (cons 'agent-lsp-server command)))

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
         (message "agent-lsp: installed in %s; M-x eglot starts it" venv))))))

(defun agent-lsp--identity-error (server)
  "Nil when SERVER is agent-lsp with protocol 1 or later; else the message."
  (let* ((info (eglot--server-info server))
         (agent (plist-get (plist-get (eglot--capabilities server) :experimental) :agent))
         (name (plist-get info :name))
         (protocol (plist-get agent :protocolVersion)))
    (unless (and (equal name "agent-lsp-server") (numberp protocol) (>= protocol 1))
      (format (concat "`%s' is not agent-lsp (it reports `%s %s, protocol %s').  "
                      "Install agent-lsp with %s and set `agent-lsp-command' to its path.")
              (string-join agent-lsp-command " ") (or name "no serverInfo.name")
              (or (plist-get info :version) "") (or protocol "none") agent-lsp--install))))

(defun agent-lsp--check-identity (server)
  "After connecting: refuse a SERVER that is not agent-lsp, with one message."
  (when (cl-typep server 'agent-lsp-server)
    (let ((wrong (agent-lsp--identity-error server)))
      (when wrong
        (display-warning 'agent-lsp wrong :error)
        ;; After the hook: eglot's own connect hooks still talk to it.
        (run-at-time 0 nil #'eglot-shutdown server)))))

(add-hook 'eglot-connect-hook #'agent-lsp--check-identity)

(add-to-list 'eglot-server-programs (cons agent-lsp-modes #'agent-lsp-contact))

(cl-defmethod eglot-client-capabilities :around ((_server agent-lsp-server))
  "Declare that this client answers confirmations itself (agent/confirmTool).
Not languageFeatures: eglot runs one server per buffer, agent-lsp here, so
there is no other server to ask; the `languageServers' setting gives the
language tools instead (docs/language-features.md, \"Language servers of
its own\")."
  (let ((caps (cl-call-next-method)))
    (plist-put caps :experimental (list :agent (list :confirmTool t)))))

(cl-defmethod eglot-handle-request
  ((_server agent-lsp-server) (_method (eql workspace/applyEdit)) &key _label edit)
  "Apply an agent's edit without a second question.
The user has answered the agent's own question about it."
  ;; eglot 1.9 asks when its second argument is non-nil; eglot 1.16+ takes an origin there and asks per
  ;; `eglot-confirm-server-edits', bound to nil here.
  (let ((eglot-confirm-server-edits nil))
    (eglot--apply-workspace-edit edit nil))
  (list :applied t))

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

(cl-defmethod eglot-handle-notification
  ((server agent-lsp-server) (_method (eql agent/update)) &key sessionId update &allow-other-keys)
  "Draw one streamed update of the chat."
  (when agent-lsp--busy
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

(defun agent-lsp--path-to-uri (file)
  "FILE as a URI (the function's name changed in eglot 1.16)."
  (funcall (if (fboundp 'eglot-path-to-uri) 'eglot-path-to-uri 'eglot--path-to-uri) file))

(defun agent-lsp--current-server ()
  "The agent-lsp server of this buffer, else the chat's; or a clear error."
  (let ((here (eglot-current-server)))
    (cond ((cl-typep here 'agent-lsp-server) here)
          ((and agent-lsp--server (jsonrpc-running-p agent-lsp--server)) agent-lsp--server)
          (t (user-error "No agent-lsp server: M-x eglot in a buffer of `agent-lsp-modes' first")))))

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
    (agent-lsp--flush-changes server)   ; the agent reads what the user typed a moment ago too
    (setq agent-lsp--server server agent-lsp--busy t agent-lsp--tools nil agent-lsp--images nil)
    (with-current-buffer (agent-lsp--buffer)
      (unless (= (point-min) (or agent-lsp--plan-end (point-min)) (point-max)) (agent-lsp--line "")))
    (agent-lsp--line "> " message)
    (dolist (image images)
      (agent-lsp--line "> [image: " (file-name-nondirectory (nth 0 image)) "]"))
    (display-buffer (agent-lsp--buffer))
    (jsonrpc-async-request
     server :agent/chat
     (append (list :message message)
             (and images (list :images (vconcat (mapcar (lambda (i) (list :mimeType (nth 1 i) :data (nth 2 i)))
                                                        images))))
             (and agent-lsp--session (list :sessionId agent-lsp--session))
             (and agent-lsp-permission-mode (list :permissionMode agent-lsp-permission-mode))
             (and file (list :context (list :activeUri (agent-lsp--path-to-uri file)))))
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

(defun agent-lsp--flush-changes (server)
  "Send SERVER the buffers' changes eglot still holds.
eglot sends them after `eglot-send-changes-idle-time'; a revert must
compare with what the user sees now."
  (dolist (buffer (eglot--managed-buffers server))
    (with-current-buffer buffer
      (eglot--signal-textDocument/didChange))))

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
  (agent-lsp--flush-changes (agent-lsp--current-server))
  (jsonrpc-async-request
   (agent-lsp--current-server) :agent/revert
   (append (list :sessionId agent-lsp--session)
           (and keep (list :toChat (prefix-numeric-value keep))))
   :success-fn
   (lambda (result)
     (let* ((name (lambda (uri) (file-relative-name (eglot--uri-to-path uri))))
            (reverted (mapcar name (plist-get result :reverted)))
            (lines (cons (concat "Reverted: " (if reverted (string-join reverted ", ") "nothing"))
                         (mapcar (lambda (r) (format "Not reverted: %s (%s)" (funcall name (plist-get r :uri))
                                                     (plist-get r :reason)))
                                 (plist-get result :refused)))))
       (agent-lsp--line (string-join lines "\n"))
       (message "agent-lsp: %s" (string-join lines "; "))))
   :error-fn (lambda (err) (message "agent-lsp: revert: %s" (plist-get err :message)))))

(defun agent-lsp--data-dir (root)
  "The server's data directory, for the workspace ROOT.
The `--data-dir' of `agent-lsp-command' (relative to ROOT), else the
server's default, $XDG_STATE_HOME/agent-lsp."
  (let ((args agent-lsp-command) dir)
    (while (and args (not dir))
      (cond ((string-prefix-p "--data-dir=" (car args)) (setq dir (substring (car args) 11)))
            ((and (equal (car args) "--data-dir") (cadr args)) (setq dir (cadr args))))
      (setq args (cdr args)))
    (if dir
        (expand-file-name dir root)
      (expand-file-name "agent-lsp" (or (getenv "XDG_STATE_HOME") (expand-file-name "~/.local/state"))))))

;;;###autoload
(defun agent-lsp-memory ()
  "Open the project memory the agent's `remember' tool keeps.
AGENTS.md at the project root, or with `\"memoryFile\": \"private\"' in
.agent-lsp/settings.json the file under the server's data directory."
  (interactive)
  (let* ((project (project-current))
         (root (directory-file-name (expand-file-name (if project (project-root project) default-directory))))
         (settings (expand-file-name ".agent-lsp/settings.json" root))
         (mode (or (and (file-readable-p settings)
                        (ignore-errors
                          (with-temp-buffer
                            (insert-file-contents settings)
                            (plist-get (json-parse-buffer :object-type 'plist) :memoryFile))))
                   "agents"))
         (file (if (equal mode "private")
                   (expand-file-name (format "memory/%s.md" (substring (secure-hash 'sha256 root) 0 16))
                                     (agent-lsp--data-dir root))
                 (expand-file-name "AGENTS.md" root))))
    (if (or (file-exists-p file) (not (equal mode "private")))
        (find-file-other-window file)
      (message "agent-lsp: the private memory file %s does not exist yet; the agent's remember tool creates it"
               (abbreviate-file-name file)))))

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
         (commands (append (plist-get (jsonrpc-request server :agent/commands (make-hash-table)) :commands) nil))
         (features (plist-get (plist-get (plist-get (eglot--capabilities server) :experimental) :agent) :features)))
    (append commands
            (when (cl-find "skills" features :test #'equal)
              (cl-loop for skill across (plist-get (jsonrpc-request server :agent/skills (make-hash-table)) :skills)
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

(defcustom agent-lsp-suggestions t
  "Non-nil: suggestions as you type in the buffers agent-lsp serves.
`agent-lsp-suggestion-mode' is turned on in them.  Whether the server
makes any is its `completions.enabled' setting."
  :type 'boolean)

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

(defvar-local agent-lsp--suggestion-timer nil "The idle timer of the next request.")

(defvar-local agent-lsp--suggestion-tick nil "`buffer-chars-modified-tick' after the last command.")

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

(defun agent-lsp--suggestion-turn-on ()
  "Turn `agent-lsp-suggestion-mode' on where agent-lsp manages the buffer."
  ;; Not `eglot-current-server' once unmanaged: eglot 1.9 would cache the server it is shutting down.
  (if (not (eglot-managed-p))
      (when agent-lsp-suggestion-mode (agent-lsp-suggestion-mode -1))
    (when (and agent-lsp-suggestions (cl-typep (eglot-current-server) 'agent-lsp-server))
      (agent-lsp-suggestion-mode 1))))

(add-hook 'eglot-managed-mode-hook #'agent-lsp--suggestion-turn-on)

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
         ;; eglot has no public way to turn an LSP range into a region (its own requests use this)
         (region (if range (eglot--range-region range) (cons (point) (point))))
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
    (when (and (vectorp items) (> (length items) 0))
      (setq agent-lsp--suggestion (list :items items :server server :pos (point-marker)))
      (unless (cl-loop for i below (length items) thereis (agent-lsp--suggestion-select i))
        (agent-lsp--suggestion-clear)))))

(defun agent-lsp-suggest (&optional invoked)
  "Ask agent-lsp for suggestions at point and show the first.
INVOKED (interactively: always) asks as the user did, for up to three;
else as typing does, for one.  A newer request drops the answer of an
older one, which the server also answers at once with nothing."
  (interactive (list t))
  (let ((server (eglot-current-server)))
    (when (cl-typep server 'agent-lsp-server)
      ;; The server must have the text as it is: eglot sends changes only after `eglot-send-changes-idle-time'.
      (eglot--signal-textDocument/didChange)
      (let ((asked (cl-incf agent-lsp--suggestion-asked))
            (buffer (current-buffer))
            (tick (buffer-chars-modified-tick))
            (pos (point)))
        ;; jsonrpc-async-request returns no request id, so an older request is not cancelled
        ;; ($/cancelRequest): the server answers it with nothing as soon as the newer one comes.
        (jsonrpc-async-request
         server :textDocument/inlineCompletion
         ;; eglot has no public way to make the position params (its own requests use this)
         (append (eglot--TextDocumentPositionParams) (list :context (list :triggerKind (if invoked 1 2))))
         :success-fn (lambda (result)
                       (when (buffer-live-p buffer)
                         (with-current-buffer buffer
                           (when (and (= asked agent-lsp--suggestion-asked)
                                      (= tick (buffer-chars-modified-tick)) (= pos (point)))
                             (agent-lsp--suggestion-answered server result)))))
         :error-fn #'ignore
         :timeout-fn #'ignore)))))

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

(defun agent-lsp--utf-16-length (string)
  "The length of STRING in UTF-16 code units, as LSP counts."
  (/ (length (encode-coding-string string 'utf-16le)) 2))

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
  "Dismiss the suggestion shown; drop the answer of a request on its way."
  (interactive)
  (cl-incf agent-lsp--suggestion-asked)
  (agent-lsp--suggestion-clear))

(provide 'agent-lsp)
;;; agent-lsp.el ends here
