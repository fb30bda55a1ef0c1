;;; agent-lsp-next-edit.el --- Next-edit suggestions from agent-lsp -*- lexical-binding: t; -*-

;; Version: 0.3.0
;; Package-Requires: ((emacs "28.1") (jsonrpc "1.0.14"))
;; Keywords: tools, convenience

;;; Commentary:

;; After you change something, agent-lsp predicts the edit that follows (the other uses of the name you just
;; renamed, say) and this package shows it where it belongs: the text it replaces struck through, the new text
;; beside it.  Then
;;
;;   TAB   jumps to the edit when point is not on its lines; TAB again applies it
;;   C-g   dismisses it
;;
;; Those keys are bound only while an edit is shown.  The edit goes away as soon as the text changes, or when
;; point goes far from it; a suggestion as you type (ghost text) and a next edit are never shown together.
;;
;;   (require 'agent-lsp-next-edit)   next edits in every buffer of `agent-lsp-mode' (`agent-lsp-next-edits')
;;   M-x agent-lsp-next-edit-mode     on or off in one buffer
;;   M-x agent-lsp-next-edit          ask at once
;;
;; The wire: textDocument/copilotInlineEdit, as GitHub Copilot's language server answers it (docs/protocol.md).

;;; Code:

(require 'agent-lsp)
(require 'seq)

(defcustom agent-lsp-next-edits t
  "Non-nil: next-edit suggestions in the buffers of `agent-lsp-mode'.
`agent-lsp-next-edit-mode' is turned on in them.  Whether the server
makes any is its `nextEdits.enabled' setting."
  :type 'boolean
  :group 'agent-lsp)

(defcustom agent-lsp-next-edit-delay 0.5
  "Seconds of idle time after a change before a next edit is asked for."
  :type 'number
  :group 'agent-lsp)

(defcustom agent-lsp-next-edit-distance 40
  "The next edit shown is dismissed when point goes more lines away."
  :type 'integer
  :group 'agent-lsp)

(defface agent-lsp-next-edit-old '((t :inherit diff-removed :strike-through t))
  "The text a next edit replaces."
  :group 'agent-lsp)

(defface agent-lsp-next-edit-new '((t :inherit diff-added))
  "The text a next edit puts in."
  :group 'agent-lsp)

(defvar-local agent-lsp--next-edit nil
  "The next edit shown: a plist.
:edit (the server's), :start and :end (markers around the text it
replaces), :overlays, :server.")

(defvar-local agent-lsp--next-edit-shown nil
  "Non-nil while a next edit is shown: `agent-lsp-next-edit-map' is on.")

(defvar-local agent-lsp--next-edit-asked 0
  "The number of the last request; the answer to an older one is dropped.")

(defvar-local agent-lsp--next-edit-request nil "(CONNECTION . ID) of the request on its way, to cancel.")

(defvar-local agent-lsp--next-edit-timer nil "The idle timer of the next request.")

(defvar agent-lsp-next-edit-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "TAB") #'agent-lsp-next-edit-accept)
    (define-key map (kbd "<tab>") #'agent-lsp-next-edit-accept)
    (define-key map (kbd "C-g") #'agent-lsp-next-edit-dismiss)
    map)
  "The keys while a next edit is shown, and only then.
TAB indents as usual otherwise.")

(add-to-list 'minor-mode-map-alist (cons 'agent-lsp--next-edit-shown agent-lsp-next-edit-map))

;;;###autoload
(define-minor-mode agent-lsp-next-edit-mode
  "Next-edit suggestions from agent-lsp (textDocument/copilotInlineEdit).
After a change and `agent-lsp-next-edit-delay' seconds without typing,
the edit agent-lsp predicts shows where it belongs: the text it
replaces struck through, the new text beside it.  Then
\\<agent-lsp-next-edit-map>\\[agent-lsp-next-edit-accept] jumps to it when point is not on its lines, and applies it
when point is; \\[agent-lsp-next-edit-dismiss] dismisses it.  \\[agent-lsp-next-edit] asks at once."
  :lighter nil
  :group 'agent-lsp
  (cond
   (agent-lsp-next-edit-mode
    (add-hook 'after-change-functions #'agent-lsp--next-edit-changed nil t)
    (add-hook 'post-command-hook #'agent-lsp--next-edit-post-command nil t)
    (add-hook 'agent-lsp-suggestion-inhibit-functions #'agent-lsp--next-edit-on-screen nil t))
   (t
    (remove-hook 'after-change-functions #'agent-lsp--next-edit-changed t)
    (remove-hook 'post-command-hook #'agent-lsp--next-edit-post-command t)
    (remove-hook 'agent-lsp-suggestion-inhibit-functions #'agent-lsp--next-edit-on-screen t)
    (agent-lsp--next-edit-stop-timer)
    (agent-lsp-next-edit-dismiss))))

(defun agent-lsp--next-edit-follow ()
  "Turn `agent-lsp-next-edit-mode' on and off with `agent-lsp-mode'.
On only when `agent-lsp-next-edits' is non-nil."
  (agent-lsp-next-edit-mode (if (and agent-lsp-mode agent-lsp-next-edits) 1 -1)))

(add-hook 'agent-lsp-mode-hook #'agent-lsp--next-edit-follow)

(defun agent-lsp--next-edit-offered (conn)
  "Non-nil when CONN's server makes next edits (its features name nextEdits)."
  (let ((agent (plist-get (plist-get (agent-lsp--capabilities conn) :experimental) :agent)))
    (seq-contains-p (plist-get agent :features) "nextEdits")))

(defun agent-lsp--next-edit-on-screen ()
  "Non-nil while a next edit is shown."
  agent-lsp--next-edit-shown)

;;; Asking

(defun agent-lsp-next-edit (&optional invoked)
  "Ask agent-lsp for the next edit and show it.
Not while a suggestion as you type is shown.  INVOKED (interactively:
always) says when there is none.  A newer request cancels the older
one ($/cancelRequest)."
  (interactive (list t))
  (let ((conn agent-lsp--connection))
    (cond
     ((not (and conn (jsonrpc-running-p conn)))
      (when invoked (message "agent-lsp: this buffer is not fed to agent-lsp (M-x agent-lsp-mode)")))
     ((not (agent-lsp--next-edit-offered conn))
      (when invoked (message "agent-lsp: this server makes no next edits; update agent-lsp")))
     ((and agent-lsp--suggestion-shown (not invoked)))  ; the suggestion on screen stays: never both shown
     (t
      (when invoked (agent-lsp-suggestion-dismiss))
      (agent-lsp--next-edit-cancel)
      (agent-lsp--flush-all conn)        ; the request is for the version the server has
      (let* ((asked (cl-incf agent-lsp--next-edit-asked))
             (buffer (current-buffer))
             (document (list :uri (agent-lsp--uri buffer-file-name) :version agent-lsp--version))
             (done (lambda () (when (buffer-live-p buffer)
                                (with-current-buffer buffer
                                  (when (= asked agent-lsp--next-edit-asked)
                                    (setq agent-lsp--next-edit-request nil)))))))
        (setq agent-lsp--next-edit-request
              (cons conn (agent-lsp--async-request
                          conn :textDocument/copilotInlineEdit
                          (list :textDocument document :position (agent-lsp--position))
                          :success-fn (lambda (result)
                                        (funcall done)
                                        (when (buffer-live-p buffer)
                                          (with-current-buffer buffer
                                            (when (and (= asked agent-lsp--next-edit-asked)
                                                       (not (agent-lsp--next-edit-answered conn document result))
                                                       invoked)
                                              (message "agent-lsp: no next edit here")))))
                          :error-fn (lambda (_) (funcall done))
                          :timeout-fn done))))))))

(defun agent-lsp--next-edit-cancel ()
  "Cancel the request on its way, if any; its answer is dropped."
  (cl-incf agent-lsp--next-edit-asked)
  (when agent-lsp--next-edit-request
    (agent-lsp--cancel (car agent-lsp--next-edit-request) (cdr agent-lsp--next-edit-request))
    (setq agent-lsp--next-edit-request nil)))

(defun agent-lsp--next-edit-current-p (edit document)
  "Non-nil when EDIT is for DOCUMENT as asked, and the buffer is still that.
Its uri and version are the request's, and the buffer has that version
with no change since."
  (let ((for (plist-get edit :textDocument)))
    (and (equal (plist-get for :uri) (plist-get document :uri))
         (equal (plist-get for :version) (plist-get document :version))
         (eql agent-lsp--version (plist-get document :version))
         (not agent-lsp--dirty)
         (stringp (plist-get edit :text))
         (plist-get (plist-get edit :range) :start) (plist-get (plist-get edit :range) :end))))

(defun agent-lsp--next-edit-answered (server document result)
  "Show the first edit of RESULT, SERVER's answer for DOCUMENT.
Only when it fits the buffer as it is and no suggestion as you type is
shown; return non-nil when it is shown."
  (let* ((edits (plist-get result :edits))
         (edit (and (> (length edits) 0) (elt edits 0))))
    (when (and edit (agent-lsp--next-edit-current-p edit document) (not agent-lsp--suggestion-shown))
      (agent-lsp-suggestion-dismiss)     ; one on its way is cancelled: never both on screen
      (agent-lsp--next-edit-show server edit)
      t)))

;;; Showing

(defun agent-lsp--next-edit-show (server edit)
  "Show SERVER's EDIT; tell the server (textDocument/didShowInlineEdit)."
  (agent-lsp--next-edit-clear)
  (let* ((range (plist-get edit :range))
         (start (agent-lsp--point (plist-get range :start)))
         (end (max start (agent-lsp--point (plist-get range :end)))))
    (setq agent-lsp--next-edit (list :edit edit :server server
                                     :start (copy-marker start) :end (copy-marker end t)
                                     :overlays (agent-lsp--next-edit-draw start end (plist-get edit :text)))
          agent-lsp--next-edit-shown t)
    (when (plist-get edit :command)
      (jsonrpc-notify server :textDocument/didShowInlineEdit (list :item (list :command (plist-get edit :command)))))))

(defun agent-lsp--next-edit-overlay (start end &rest properties)
  "An overlay from START to END with PROPERTIES."
  (let ((ov (make-overlay start end nil t nil)))
    (overlay-put ov 'priority 100)
    (while properties (overlay-put ov (pop properties) (pop properties)))
    ov))

(defun agent-lsp--next-edit-draw (start end text)
  "Draw the edit that replaces START..END by TEXT; return its overlays.
Within a line the new text follows the old, struck through; an edit of
several lines shows, below its last line, its lines as they will read."
  (save-excursion
    (save-restriction
      (widen)
      (let* ((one-line (and (not (string-search "\n" text))
                            (= (progn (goto-char start) (line-end-position))
                               (progn (goto-char end) (line-end-position)))))
             ;; Whole lines replaced (START and END at line starts): no line after them is shown
             (lines (and (< start end) (progn (goto-char start) (bolp)) (progn (goto-char end) (bolp))
                         (or (string-empty-p text) (string-suffix-p "\n" text))))
             (last (if lines (1- end) end))
             (result (concat (buffer-substring-no-properties (progn (goto-char start) (line-beginning-position))
                                                             start)
                             (if lines (string-remove-suffix "\n" text) text)
                             (if lines "" (buffer-substring-no-properties end (progn (goto-char end)
                                                                                    (line-end-position))))))
             (old (and (< start end) (agent-lsp--next-edit-overlay start end 'face 'agent-lsp-next-edit-old)))
             (new (cond (one-line (propertize text 'face 'agent-lsp-next-edit-new))
                        ((and lines (string-empty-p text)) "")
                        (t (concat "\n" (propertize result 'face 'agent-lsp-next-edit-new)))))
             (at (if one-line end (progn (goto-char last) (line-end-position)))))
        (unless (string-empty-p new)
          (put-text-property 0 1 'cursor t new))  ; point at the edit stays before the new text
        (delq nil (list old (unless (string-empty-p new)
                              (agent-lsp--next-edit-overlay at at 'after-string new))))))))

(defun agent-lsp--next-edit-clear ()
  "Take the next edit off the screen."
  (when agent-lsp--next-edit
    (mapc #'delete-overlay (plist-get agent-lsp--next-edit :overlays))
    (set-marker (plist-get agent-lsp--next-edit :start) nil)
    (set-marker (plist-get agent-lsp--next-edit :end) nil))
  (setq agent-lsp--next-edit nil agent-lsp--next-edit-shown nil))

;;; Taking it, or not

(defun agent-lsp--next-edit-away-p ()
  "Non-nil when point is not on the lines of the next edit shown."
  (save-restriction
    (widen)
    (let ((line (line-number-at-pos)))
      (not (<= (line-number-at-pos (plist-get agent-lsp--next-edit :start)) line
               (line-number-at-pos (plist-get agent-lsp--next-edit :end)))))))

(defun agent-lsp-next-edit-accept ()
  "Jump to the next edit shown when point is not on its lines; else apply it.
Applying runs its command (agent.nextEditAccepted)."
  (interactive)
  (let ((shown agent-lsp--next-edit))
    (when shown
      (if (agent-lsp--next-edit-away-p)
          (progn (push-mark nil t)
                 (goto-char (plist-get shown :start)))
        (let ((start (marker-position (plist-get shown :start)))
              (end (marker-position (plist-get shown :end)))
              (edit (plist-get shown :edit)))
          (agent-lsp--next-edit-clear)
          (goto-char start)
          (delete-region start end)
          (insert (plist-get edit :text))
          (agent-lsp--suggestion-run-command (plist-get shown :server) edit))))))

(defun agent-lsp-next-edit-dismiss ()
  "Dismiss the next edit shown; cancel a request on its way."
  (interactive)
  (agent-lsp--next-edit-cancel)
  (agent-lsp--next-edit-clear))

;;; Following the buffer

(defun agent-lsp--next-edit-stop-timer ()
  "Cancel the idle timer of the next request."
  (when agent-lsp--next-edit-timer
    (cancel-timer agent-lsp--next-edit-timer)
    (setq agent-lsp--next-edit-timer nil)))

(defun agent-lsp--next-edit-changed (&rest _)
  "After a change: the edit shown and the answer awaited no longer fit.
Ask again once idle."
  (agent-lsp-next-edit-dismiss)
  (agent-lsp--next-edit-stop-timer)
  (setq agent-lsp--next-edit-timer
        (run-with-idle-timer agent-lsp-next-edit-delay nil #'agent-lsp--next-edit-idle (current-buffer))))

(defun agent-lsp--next-edit-idle (buffer)
  "Ask for the next edit in BUFFER, when it is still the one being edited."
  (when (and (buffer-live-p buffer) (eq buffer (window-buffer (selected-window))))
    (with-current-buffer buffer
      (setq agent-lsp--next-edit-timer nil)
      (agent-lsp-next-edit))))

(defun agent-lsp--next-edit-post-command ()
  "After a command: give way to a suggestion asked for.
Dismiss an edit point went far from."
  (when agent-lsp--next-edit
    (when (or (eq this-command 'agent-lsp-suggest)
              (> (abs (- (line-number-at-pos) (line-number-at-pos (plist-get agent-lsp--next-edit :start))))
                 agent-lsp-next-edit-distance))
      (agent-lsp-next-edit-dismiss))))

(provide 'agent-lsp-next-edit)
;;; agent-lsp-next-edit.el ends here
