# complete.zsh - for test-completion: types a line into an interactive zsh
# on a pseudo-terminal, presses Tab, and appends the candidates to a file.
# usage: zsh -f complete.zsh FPATH_DIR OUT_FILE LINE
# Each compadd call's matches are written, one a line. Markers printed by
# the inner zsh tell when it is ready and when the completion has ended:
# keys typed ahead of a completion make zsh cut it short.
zmodload zsh/zpty || exit 2
zpty z zsh -f -i
zpty -w z "PS1='' RPS1=''; fpath=(${(q)1} \$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w z "compadd() { local -a _c; builtin compadd -O _c \"\$@\"; print -rl -- \$_c >> ${(q)2}; builtin compadd \"\$@\" }"
# The quotes keep the echo of a command from matching its marker.
zpty -w z "_marked() { _main_complete; print -u2 CO''MPLETED }"
zpty -w z "zle -C marked complete-word _marked; bindkey '^I' marked"
zpty -w z "print RE''ADY"
zpty -r z out '*READY*'
zpty -w -n z "$3"$'\t'
zpty -r z out '*COMPLETED*'
zpty -w z $'\C-u'"print DO''NE"
zpty -r z out '*DONE*'
zpty -d z
