# bash completion for traceanalyze: commands, options, and column names
# after --fail-if / --max-increase. Source it, or install it as
# /usr/share/bash-completion/completions/traceanalyze.

# The columns come from the command itself (--columns), for the options
# typed so far: they cannot drift from what --fail-if will see.
_traceanalyze_columns()
{
	local cmd=$1; shift
	local args=() w skip=0
	for w in "$@"; do
		# the gate being typed and its value are not options for --columns
		if [ $skip = 1 ]; then skip=0; continue; fi
		case "$w" in
		--fail-if|--max-increase|--baseline|-o|--output) skip=1 ;;
		*) args+=("$w") ;;  # PATH too: --columns reads no trace
		esac
	done
	traceanalyze "$cmd" "${args[@]}" --columns 2>/dev/null | cut -f1
}

# Rank numbers of the traces in the directory typed so far (rank-3.json,
# rank_3..., as traceanalyze reads them from file names), and "all".
_traceanalyze_ranks()
{
	local w f
	for w in "$@"; do
		[ -d "$w" ] || continue
		for f in "$w"/*.json "$w"/*.json.gz; do
			[ -e "$f" ] || continue
			f=${f##*/}
			[[ $f =~ rank[-_]?([0-9]+) ]] && echo "${BASH_REMATCH[1]}"
		done
	done | sort -un
	echo all
}

_traceanalyze()
{
	local cur prev cmd opts
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	# the commands from the binary's own registry (--list-commands)
	local commands
	commands="$("${COMP_WORDS[0]}" --list-commands 2>/dev/null | cut -f1) help"
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "$commands --help --version" -- "$cur"))
		return
	fi
	cmd=${COMP_WORDS[1]}
	case "$prev" in
	--fail-if|--max-increase)
		COMPREPLY=($(compgen -W "$(_traceanalyze_columns "$cmd" "${COMP_WORDS[@]:2:COMP_CWORD-3}")" -- "${cur#[\'\"]}"))
		return ;;
	--format) COMPREPLY=($(compgen -W "text csv json" -- "$cur")); return ;;
	--ranks) COMPREPLY=($(compgen -W "$(_traceanalyze_ranks "${COMP_WORDS[@]:2}")" -- "$cur")); return ;;
	--window) COMPREPLY=($(compgen -W "steps span" -- "$cur")); return ;;
	--missing) COMPREPLY=($(compgen -W "fail pass" -- "$cur")); return ;;
	--by) if [ "$cmd" = diff ]; then COMPREPLY=($(compgen -W "name short" -- "$cur"))
	      elif [ "$cmd" = memory ]; then COMPREPLY=($(compgen -W "op annotation stack" -- "$cur"))
	      elif [ "$cmd" = roofline ]; then COMPREPLY=($(compgen -W "op step kernel" -- "$cur"))
	      elif [ "$cmd" = overlap ]; then COMPREPLY=($(compgen -W "rank step" -- "$cur"))
	      elif [ "$cmd" = comms ]; then COMPREPLY=($(compgen -W "op step" -- "$cur"))
	      else COMPREPLY=($(compgen -W "kernel type op" -- "$cur")); fi; return ;;
	--kind) COMPREPLY=($(compgen -W "cpu gpu all" -- "$cur")); return ;;
	--baseline|-o|--output|--html|--snapshot|--trace) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	help) COMPREPLY=($(compgen -W "$commands" -- "$cur")); return ;;
	esac
	if [[ "$cur" == -* ]]; then
		opts=$(traceanalyze "$cmd" --help 2>/dev/null | grep -o -- '--[a-z-]*' | sort -u)
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		return
	fi
	COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -F _traceanalyze traceanalyze
