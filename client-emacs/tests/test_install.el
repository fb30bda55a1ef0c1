;;; test_install.el --- M-x agent-lsp-install, then agent-lsp-mode starts the installed server  -*- lexical-binding: t; -*-
;; Run: timeout 300 emacs --batch -l client-emacs/tests/test_install.el   (exit code 0 = passed)
;; The server's wheel is built from this checkout; M-x agent-lsp-install makes a virtual environment in a scratch
;; directory and installs it (its dependencies from pip's cache or the index); with `agent-lsp' off the PATH, the
;; default command then finds the installed server, and agent-lsp-mode connects to it.

(load (expand-file-name "helpers.el" (file-name-directory (or load-file-name buffer-file-name))) nil t)

(let ((code 1))
  (condition-case err
      (let ((repo (expand-file-name "../.." test-here))
            (wheels (concat test-dir "wheels/")))
        (unless (eq 0 (call-process "python3" nil "*build*" nil "-m" "build" "--wheel" "--no-isolation"
                                    "--outdir" wheels repo))
          (error "building the wheel failed: %s" (with-current-buffer "*build*" (buffer-string))))
        (load (expand-file-name "../agent-lsp.el" test-here) nil t)
        ;; agent-lsp off the PATH: only the system's Python and tools remain.
        (setq exec-path '("/usr/bin" "/bin"))
        (setenv "PATH" "/usr/bin:/bin")
        (setq agent-lsp-install-directory (concat test-dir "venv"))
        (test-eq '(user-error "agent-lsp was not found (`agent-lsp').  Install it with M-x agent-lsp-install, `pipx install agent-lsp-server' or `uv tool install agent-lsp-server', or set `agent-lsp-command' to its full path.")
                 (condition-case e (agent-lsp-server-command) (user-error e)) "before installing: what to do")
        (agent-lsp-install (car (directory-files wheels t "\\.whl\\'")))
        (let ((end (+ (float-time) 240)))  ; pip takes its time: a ceiling of its own
          (while (not agent-lsp--install-result)
            (when (> (float-time) end) (error "Timed out waiting for agent-lsp-install"))
            (accept-process-output nil 0.1)))
        (test-eq 'ok agent-lsp--install-result "the install")
        (test-eq (list (expand-file-name "bin/agent-lsp" (concat test-dir "venv")))
                 (agent-lsp-server-command) "the default command finds the installed server")
        (with-temp-file (concat test-dir "a.py") (insert "x = 1\n"))
        (find-file (concat test-dir "a.py"))
        (agent-lsp-mode 1)
        (test-eq "agent-lsp-server" (plist-get (agent-lsp--info agent-lsp--connection) :name)
                 "the installed server answers as agent-lsp")
        (setq code 0))
    (error (princ (format "%s\n" (error-message-string err)) #'external-debugging-output)))
  (princ (format "%s - emacs agent-lsp-install (%d ms)\n" (if (= code 0) "ok" "not ok")
                 (round (* 1000 (- (float-time) test-t0)))))
  (test-exit code))
