# bash completion for gpuk. Installed to share/bash-completion/completions/gpuk; or source it.
_gpuk() {
  local cur prev words cword
  cur="${COMP_WORDS[COMP_CWORD]}"
  prev="${COMP_WORDS[COMP_CWORD-1]}"
  local commands="run tune list check compare"
  local global="--kernels --plugins --cache-dir --no-cache --tuning-db --allow-unsafe-dirs --help --version"
  local command="" i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "${COMP_WORDS[i]}" in
      --kernels|--plugins|--cache-dir|--tuning-db) ((i++)) ;;
      -*) ;;
      *) command="${COMP_WORDS[i]}"; break ;;
    esac
  done
  case "$prev" in
    --kernels|--plugins|--cache-dir|--out|--merge) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    --json|--csv|--markdown|--tuning|--tuning-db|--export) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    --input|--output) COMPREPLY=($(compgen -f -X '!*.npy' -- "$cur") $(compgen -d -- "$cur")); return ;;
    --strategy) COMPREPLY=($(compgen -W "exhaustive random anneal bayes" -- "$cur")); return ;;
    --objective) COMPREPLY=($(compgen -W "time energy edp" -- "$cur")); return ;;
    --devices) COMPREPLY=($(compgen -W "all" -- "$cur")); return ;;
    --arch) COMPREPLY=($(compgen -W "sm_70 sm_75 sm_80 sm_86 sm_89 sm_90 sm_100 sm_120" -- "$cur")); return ;;
    --device|--repeats|--time-limit|--budget|--seconds|--seed|--threads|--show|--threshold|--family|--shard|--stop-after) return ;;
  esac
  local options
  case "$command" in
    "") COMPREPLY=($(compgen -W "$commands $global" -- "$cur")); return ;;
    run) options="--json --csv --markdown --input --output --no-pin --device --devices --repeats --tuning --time-limit --help" ;;
    tune) options="--json --csv --device --devices --strategy --objective --energy --auto-repeats --fresh --budget --seconds --seed --threads --show --no-save --time-limit --export --family --out --shard --merge --stop-after --allow-missing --help" ;;
    list) options="--help" ;;
    check) options="--arch --help" ;;
    compare) options="--threshold --markdown --help" ;;
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$options" -- "$cur"))
  else
    case "$command" in
      run|tune) COMPREPLY=($(compgen -f -X '!*.y*ml' -- "$cur") $(compgen -d -- "$cur")) ;;
      check) COMPREPLY=($(compgen -f -X '!*.@(cu|yaml|yml)' -- "$cur") $(compgen -d -- "$cur")) ;;
      compare) COMPREPLY=($(compgen -f -X '!*.json' -- "$cur") $(compgen -d -- "$cur")) ;;
    esac
  fi
}
shopt -s extglob 2>/dev/null
complete -o filenames -F _gpuk gpuk
