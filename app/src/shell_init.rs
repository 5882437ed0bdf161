//! `berth shell-init bash|zsh|fish`: an opt-in snippet for the user's shell rc that reports
//! the working directory (OSC 7, `file://host/path`, percent-encoded) at every prompt and marks
//! prompts and commands (OSC 133 A prompt start, B prompt end, C command start, D;status
//! command end).
//!
//! Owns only the snippets' text. The server reads OSC 7 for the pane's cwd and OSC 133 for its
//! lifecycle (`working` from C until the next prompt, `idle` at the prompt).

/// The shells a snippet exists for.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum InitShell {
    /// GNU bash 4.4 or later (for PS0).
    Bash,
    /// zsh.
    Zsh,
    /// fish 3 or later.
    Fish,
}

/// The snippet for `shell`, to `eval` from the rc file.
pub fn snippet(shell: InitShell) -> &'static str {
    match shell {
        InitShell::Bash => BASH,
        InitShell::Zsh => ZSH,
        InitShell::Fish => FISH,
    }
}

const BASH: &str = r#"# Berth shell integration for bash: add to ~/.bashrc
#   eval "$(berth shell-init bash)"
if [ -n "${BASH_VERSION:-}" ] && [ -z "${__berth_shell_init:-}" ]; then
__berth_shell_init=1
__berth_osc7() {
    local LC_ALL=C p="$PWD" out="" c i
    for ((i = 0; i < ${#p}; i++)); do
        c="${p:i:1}"
        case "$c" in
            [-/._~a-zA-Z0-9]) out+="$c" ;;
            *) printf -v c '%%%02X' "'$c"; out+="$c" ;;
        esac
    done
    printf '\033]7;file://%s%s\007' "${HOSTNAME:-}" "$out"
}
__berth_prompt() {
    local status=$?
    if [ -n "${__berth_ran:-}" ]; then printf '\033]133;D;%s\007' "$status"; fi
    __berth_ran=1
    __berth_osc7
    printf '\033]133;A\007'
    return $status
}
PROMPT_COMMAND="__berth_prompt${PROMPT_COMMAND:+;$PROMPT_COMMAND}"
PS1="${PS1}\[\033]133;B\007\]"
PS0="${PS0:-}"$'\033]133;C\007'
fi
"#;

const ZSH: &str = r#"# Berth shell integration for zsh: add to ~/.zshrc
#   eval "$(berth shell-init zsh)"
if [[ -z ${__berth_shell_init:-} ]]; then
__berth_shell_init=1
autoload -Uz add-zsh-hook
__berth_osc7() {
    emulate -L zsh
    setopt extendedglob
    local LC_ALL=C
    local p=${PWD//(#m)[^-\/._~A-Za-z0-9]/%${(l:2::0:)$(( [##16] #MATCH ))}}
    printf '\033]7;file://%s%s\007' "$HOST" "$p"
}
__berth_precmd() {
    local s=$?
    [[ -n ${__berth_ran:-} ]] && printf '\033]133;D;%s\007' "$s"
    __berth_ran=1
    __berth_osc7
    printf '\033]133;A\007'
}
__berth_preexec() { printf '\033]133;C\007'; }
add-zsh-hook precmd __berth_precmd
add-zsh-hook preexec __berth_preexec
PS1="${PS1}%{"$'\033]133;B\007'"%}"
fi
"#;

const FISH: &str = r#"# Berth shell integration for fish: add to ~/.config/fish/config.fish
#   berth shell-init fish | source
if not set -q __berth_shell_init
    set -g __berth_shell_init 1
    function __berth_osc7 --on-variable PWD
        printf '\e]7;file://%s%s\a' (hostname) (string escape --style=url -- $PWD)
    end
    function __berth_prompt --on-event fish_prompt
        printf '\e]133;A\a'
    end
    function __berth_preexec --on-event fish_preexec
        printf '\e]133;C\a'
    end
    function __berth_postexec --on-event fish_postexec
        printf '\e]133;D;%s\a' $status
    end
    __berth_osc7
end
"#;
