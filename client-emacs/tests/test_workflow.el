;;; test_workflow.el --- the plan, subagents, /commands and images in client-emacs/agent-lsp.el  -*- lexical-binding: t; -*-
;; Run: timeout 120 emacs --batch -l client-emacs/tests/test_workflow.el   (exit code 0 = passed)
;; Through agent-lsp-mode, the real server and the scripted Messages API: todo_write's plan is a checklist at the
;; top of *agent-lsp*, redrawn at each update; a task's subagent shows its tool call indented under the task,
;; not its text; completion-at-point completes /commands from agent/commands (builtins and the user's command
;; files) with their hints; M-x agent-lsp-command-run sends "/review a.py", which the server expands;
;; M-x agent-lsp-attach-image refuses another type or more than 5 MiB, and sends an image as agent/chat
;; `images'; a new session drops the plan.

(load (expand-file-name "helpers.el" (file-name-directory (or load-file-name buffer-file-name))) nil t)

(defun test-transcript ()
  (with-current-buffer "*agent-lsp*" (buffer-substring-no-properties (point-min) (point-max))))

(defun test-write (file bytes)
  "Write BYTES (a count) of binary data to FILE."
  (with-temp-file file
    (set-buffer-multibyte nil)
    (dotimes (i bytes) (insert (% (* i 7) 256)))))

(defun test-todos (a b)
  `((type . "tool_use") (id . ,(concat "toolu_plan_" a b)) (name . "todo_write")
    (input . ((todos . [((content . "Read a.py") (status . ,a)) ((content . "Answer") (status . ,b))])))))

(let ((code 1) (plans nil) (sent nil))
  (condition-case err
      (progn
        (with-temp-file (concat test-dir "a.py") (insert "x = 1\n"))
        (make-directory (concat test-dir ".config/agent-lsp/commands") t)
        (with-temp-file (concat test-dir ".config/agent-lsp/commands/review.md")
          (insert "---\ndescription: Review a file\nargument-hint: <file>\n---\nReview $ARGUMENTS carefully.\n"))
        (make-directory (concat test-dir ".config/agent-lsp/skills/notes") t)
        (with-temp-file (concat test-dir ".config/agent-lsp/skills/notes/SKILL.md")
          (insert "---\nname: notes\ndescription: Write release notes\n---\nWrite the notes.\n"))
        (setenv "XDG_CONFIG_HOME" (concat test-dir ".config"))  ; the server's user command files and skills
        (test-write (concat test-dir "shot.png") 1001)
        (with-temp-file (concat test-dir "big.gif") (insert (make-string (1+ (* 5 1024 1024)) ?G)))
        (test-fake-api
         `[((content . [,(test-todos "in_progress" "pending")]))
           ((content . [((type . "tool_use") (id . "toolu_task") (name . "task")
                         (input . ((description . "Look at a.py") (prompt . "What is x in a.py?"))))]))
           ((content . [((type . "tool_use") (id . "toolu_sub") (name . "read_file") (input . ((path . "a.py"))))]))
           ((content . [((type . "text") (text . "x is 1."))]))
           ((content . [,(test-todos "completed" "in_progress")]))
           ((content . [((type . "text") (text . "x is 1, says the subagent."))]))
           ((content . [((type . "text") (text . "Reviewed."))]))
           ((content . [((type . "text") (text . "A picture."))]))])
        (load (expand-file-name "../agent-lsp.el" test-here) nil t)
        (setq agent-lsp-command (list "agent-lsp" "--data-dir" (concat test-dir "data")))
        (find-file (concat test-dir "a.py"))
        (agent-lsp-mode 1)
        (advice-add 'agent-lsp--show-plan :after
                    (lambda (&rest _)
                      (with-current-buffer "*agent-lsp*"
                        (push (buffer-substring-no-properties (point-min) (or agent-lsp--plan-end (point-min))) plans))))
        (agent-lsp-chat "what is x?")
        (test-wait "the chat" (lambda () (not agent-lsp--busy)))
        (test-eq '("Plan (0/2 done)\n- [~] Read a.py\n- [ ] Answer\n\n"
                   "Plan (1/2 done)\n- [x] Read a.py\n- [~] Answer\n\n")
                 (reverse plans) "the plan after each update")
        (test-eq (concat "Plan (1/2 done)\n- [x] Read a.py\n- [~] Answer\n\n"
                         "> what is x?\n● Update the plan [completed]\n● Task: Look at a.py [completed]\n"
                         "  ● Read a.py [completed]\n● Update the plan [completed]\n"
                         "x is 1, says the subagent.\nDone.\n")
                 (test-transcript) "*agent-lsp*")

        ;; completion-at-point for a leading /
        (with-temp-buffer
          (insert "/re")
          (let ((capf (agent-lsp-completion-at-point)))
            (test-eq '(1 4) (list (nth 0 capf) (nth 1 capf)) "what is completed: the /word")
            (test-eq '("/review") (all-completions "/re" (nth 2 capf)) "the commands starting with /re")
            (test-eq " <file>  Review a file [user]" (funcall (plist-get (nthcdr 3 capf) :annotation-function)
                                                            "/review")
                     "its hint, description and source")
            (dolist (builtin '("/compact" "/memory"))
              (unless (member builtin (nth 2 capf)) (error "%s is not offered: %S" builtin (nth 2 capf))))
            (test-eq '("/notes") (all-completions "/no" (nth 2 capf)) "the user's skill, beside the commands")
            (test-eq "  Write release notes [user skill]"
                     (funcall (plist-get (nthcdr 3 capf) :annotation-function) "/notes")
                     "a skill's description and source")))
        (with-temp-buffer
          (insert "see /re")
          (test-eq nil (agent-lsp-completion-at-point) "a / inside the message completes nothing"))

        ;; M-x agent-lsp-command-run: the command picked, its arguments typed, "/review a.py" sent.
        (cl-letf (((symbol-function 'completing-read) (lambda (&rest _) "/review"))
                  ((symbol-function 'read-string) (lambda (prompt &rest _)
                                                    (test-eq "/review <file>: " prompt "the arguments' prompt")
                                                    "a.py")))
          (call-interactively #'agent-lsp-command-run))
        (test-wait "the command" (lambda () (not agent-lsp--busy)))
        (unless (string-suffix-p "Done.\n\n> /review a.py\nReviewed.\nDone.\n" (test-transcript))
          (error "*agent-lsp* after the command: %S" (test-transcript)))
        (let* ((requests (json-read-file (concat test-dir "requests.json")))
               (messages (cdr (assq 'messages (aref requests 6)))))
          (unless (string-match-p "Review a.py carefully." (format "%S" (aref messages (1- (length messages)))))
            (error "The model did not get the command's prompt: %S" messages)))

        ;; M-x agent-lsp-attach-image
        (test-eq '(user-error "a.py is not an image agent-lsp can send (png, jpg, jpeg, gif or webp)")
                 (condition-case e (agent-lsp-attach-image (concat test-dir "a.py")) (user-error e))
                 "another type")
        (test-eq '(user-error "big.gif is 5.0 MiB; an image can be at most 5 MiB")
                 (condition-case e (agent-lsp-attach-image (concat test-dir "big.gif")) (user-error e))
                 "too big")
        (test-eq nil agent-lsp--images "nothing attached")
        (agent-lsp-attach-image (concat test-dir "shot.png"))
        (advice-add 'agent-lsp--async-request :before
                    (lambda (_conn method params &rest _) (when (eq method :agent/chat) (setq sent params))))
        (agent-lsp-chat "what is in this picture?")
        (test-wait "the chat with an image" (lambda () (not agent-lsp--busy)))
        (test-eq (list "what is in this picture?"
                       (vector (list :mimeType "image/png"
                                     :data (string-trim (shell-command-to-string
                                                         (concat "base64 -w0 " test-dir "shot.png"))))))
                 (list (plist-get sent :message) (plist-get sent :images)) "agent/chat message and images")
        (let* ((requests (json-read-file (concat test-dir "requests.json")))
               (messages (cdr (assq 'messages (aref requests 7))))
               (content (cdr (assq 'content (aref messages (1- (length messages)))))))
          (test-eq `(((type . "image") (source . ((type . "base64") (media_type . "image/png")
                                                  (data . ,(plist-get (aref (plist-get sent :images) 0) :data))))))
                   (cl-remove-if-not (lambda (part) (equal (cdr (assq 'type part)) "image")) (append content nil))
                   "the model got the image"))
        (unless (string-suffix-p "> what is in this picture?\n> [image: shot.png]\nA picture.\nDone.\n" (test-transcript))
          (error "*agent-lsp* after the image: %S" (test-transcript)))
        (test-eq nil agent-lsp--images "nothing left for the next message")

        ;; A new session: the old session's plan goes.
        (agent-lsp-new-session)
        (unless (string-prefix-p "> what is x?\n" (test-transcript))
          (error "*agent-lsp* after a new session: %S" (test-transcript)))
        (setq code 0))
    (error (princ (format "%s\n" (error-message-string err)) #'external-debugging-output)))
  (princ (format "%s - emacs plan, subagents, commands, images (%d ms)\n" (if (= code 0) "ok" "not ok")
                 (round (* 1000 (- (float-time) test-t0)))))
  (test-exit code))
