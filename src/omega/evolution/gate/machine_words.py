"""The words with which a proposal speaks of the machine itself, in English, Spanish, French,
German and Portuguese (and the few Italian, Dutch, Polish and Turkish verbs of deleting that a
language identifier may miss in a short sentence): programs and command lines, files, folders
and disks, deleting and wiping, network scanning and attacks, credential stores, starting at
login. Not a list of what is forbidden: a list of what the gate's rules do not vouch for, so a
proposal naming any of it waits for the owner (machine.py).

Patterns run over folded text (normalize.fold: accents stripped, look-alikes mapped), so they
are written without accents ("supprimer", "loschen").
"""

from __future__ import annotations

from omega.evolution.gate.lexicon import any_of as _any

# Programs, shells and interpreters, named as words. Ordinary words that are also commands
# (cat, find, head, kill, format, zip, mount, node, su) are left to the code rules: a flag or
# a path beside them.
PROGRAMS = _any(
    r"\b(rm|rmdir|srm|sudo|doas|dd|mkfs(\.\w+)?|shred|wipefs|fdisk|gdisk|sfdisk|parted|"
    r"diskpart|diskutil|truncate|chmod|chown|chattr|chgrp|xargs|tar|unzip|gzip|base64|"
    r"xxd|openssl|gpg2?|pgp|ssh|scp|sftp|rsync|curl|wget|git|npm|pip3?|docker|kubectl|"
    r"aws|gcloud|gsutil|gh|bash|zsh|ksh|csh|sh|pwsh|powershell|cmd(\.exe)?|"
    r"python\d*(\.\d+)?|perl|ruby|nodejs|node\.js|deno|php|lua|osascript|crontab|systemctl|"
    r"launchctl|schtasks|reg(\.exe)?|regedit|vssadmin|wbadmin|bcdedit|cipher|icacls|takeown|"
    r"certutil|bitsadmin|mshta|rundll32|regsvr32|wmic|pkill|killall|shutil|rmtree|unlink|"
    r"subprocess|os\.system|os\.remove|popen|iptables|nft|ufw|passwd|useradd|usermod|visudo|"
    r"nohup|tmux|umount|losetup|cryptsetup|sed|awk)\b",
    r"\b(remove-item|format-volume|clear-disk|clear-content|set-content|invoke-expression|"
    r"iex|start-process|new-item|copy-item|move-item|get-content|out-file)\b",
)
# Where a command is typed, and the options a command takes: commands are the owner's to
# approve.
COMMAND_LINE = _any(
    r"\b(command|commands|cli|terminal|console|shell|command[\s-]line|command\s+(tool|prompt)|"
    r"script|scripts|one-liner|run_shell|exec)\b",
    r"\b(comando|comandos|linea\s+de\s+comandos|consola)\b",
    r"\b(commande|commandes|ligne\s+de\s+commande|invite\s+de\s+commandes)\b",
    r"\b(befehl|befehle|befehlszeile|kommandozeile|eingabeaufforderung|skript)\b",
    r"\b(linha\s+de\s+comando)\b",
    r"\b(recursive(ly)?|recursivo|recursivamente|recursif|recursivement|rekursiv)\b",
)
# Files, folders, disks and stores: the machine's own contents.
STORAGE = _any(
    r"\b(files?|folders?|directory|directories|dirs?|dotfiles?|disks?|drives?|hard\s+drive|"
    r"partitions?|partition\s+table|file\s?systems?|boot\s+(sector|loader)|mbr|"
    r"home\s+(folder|directory|dir)|repositor(y|ies)|repos?|backups?|snapshots?|"
    r"shadow\s+copies|registry|photo\s+library|appdata|"
    r"config(uration)?\s+(files?|folders?|director(y|ies)|dir))\b",
    r"\b(archivos?|ficheros?|carpetas?|directorios?|discos?|particion(es)?|repositorios?|"
    r"copias?\s+de\s+seguridad)\b",
    r"\b(fichiers?|dossiers?|repertoires?|disques?|partitions?|depots?|sauvegardes?)\b",
    r"\b(dateien|datei|\w*ordner[sn]?|\w*verzeichnis(se|ses)?|festplatten?|laufwerke?|"
    r"partitionen|sicherungen)\b",
    r"\b(arquivos?|pastas?|diretorios?|particao|particoes|repositorios?|"
    r"copias?\s+de\s+seguranca)\b",
)
# The computer, its programs, settings, accounts and what it stores: what a skill that works
# on the text of the conversation (or a documented public API) never needs to name.
MACHINE_NOUNS = _any(
    r"\b(computers?|machines?|laptops?|pcs?|macbooks?|devices?|(operating\s+)?systems?|"
    r"phones?|smartphones?|tablets?|servers?|databases?|programs?|software|apps?|"
    r"applications?|process(es)?|settings|preferences|firewalls?|antivirus|storage|"
    r"stor(ed|es)|saved|photos|pictures|videos|documents|accounts?|access\s+to|"
    r"remote\s+access|authenticator|hidden|"
    r"(under|in|inside|from|across|of)\s+(the\s+)?(owner'?s\s+|my\s+|your\s+|their\s+)?"
    r"home)\b",
    r"\b(ordenador\w*|computador\w*|maquinas?|portatil\w*|dispositivos?|sistemas?|"
    r"telefonos?|movil\w*|servidor\w*|bases?\s+de\s+datos|programas?|aplicacion\w*|"
    r"procesos?|configuracion\w*|ajustes|almacenamiento|fotos|documentos|cuentas|acceso)\b",
    r"\b(ordinateurs?|appareils?|systemes?|telephones?|serveurs?|bases?\s+de\s+donnees|"
    r"programmes?|logiciels?|applications?|processus|parametres|reglages|pare-feu|stockage|"
    r"comptes|acces)\b",
    r"\b(rechner\w*|gerat\w*|betriebssystem\w*|handys?|telefon\w*|datenbank\w*|"
    r"programm\w*|anwendung\w*|prozess\w*|einstellungen|speicher\w*|bilder|dokumente|"
    r"konten|zugriff\w*)\b",
    r"\b(computador\w*|aparelhos?|celular\w*|banco\s+de\s+dados|aplicativos?|"
    r"processos?|configurac\w*|armazenamento|contas|acesso)\b",
)
# Deleting, wiping, formatting, overwriting; and doing it for good, without asking.
DESTROY_VERBS = _any(
    r"\b(delet\w*|eras(e|es|ed|ing)|wip(e|es|ed|ing)|reformat\w*|purg\w*|destroy\w*|"
    r"overwrit\w*|nuk(e|es|ed|ing)|shred\w*|obliterat\w*|truncat\w*|zero(es|s)?\s+out|"
    r"factory[\s-]reset|empty\s+(the|every|all|my)|clear\s+out|scrub\w*|corrupt\w*|"
    r"encrypt\s+(all|every|the\s+owner)|get\s+rid\s+of|throw\w*\s+(\w+\s+){0,3}away|"
    r"clean(s|ed|ing)?\s+(out|up\s+(all|every))|forget\s+(all|every)|drop(s|ped|ping)?\s+"
    r"(all|every|the)|uninstall\w*|kill(s|ed|ing)?\s+(all|every)|lock\w*\s+(\w+\s+){0,4}out|"
    r"dispos(e|es|ed|ing)\s+of|discard\w*|trash\w*)\b",
    r"\b(desinstal\w*|deinstallier\w*|tira\w*\s+(todo|todas|todos)|jet(er|te|tez)\b|"
    r"wegwerf\w*|wirf\s+\w+\s+weg|jog(ar|ue)\s+fora)\b",
    r"\b(borra\w*|borre\w*|elimin\w*|suprim\w*|formate\w*|vaci(a|ar|e)\b|destru\w*|"
    r"sobrescrib\w*)\b",
    r"\b(supprim\w*|effac\w*|format(e|er|ez|ons)|vid(e|er|ez)\b|detrui\w*|ecras\w*)\b",
    r"\b(losch\w*|entfern\w*|formatier\w*|leer(e|en|t)\b|zerstor\w*|uberschreib\w*|"
    r"vernicht\w*|platt\s+mach\w*)\b",
    r"\b(apag(a|ar|ue|uem)|exclu(a|ir|i)\w*|format(a|ar|em)\b|esvazi\w*|sobrescrev\w*)\b",
    r"\b(cancella\w*|svuota\w*|formatta\w*|verwijder\w*|wis\b|formatteer\w*|usun\w*|"
    r"skasuj\w*|sformatuj\w*|sil\b|kalici)\b",
    r"\b(permanently|for\s+good|definitivement|permanentemente|dauerhaft|endgultig|"
    r"de\s+forma\s+permanente|sans\s+demander|without\s+asking|sin\s+pedir|sem\s+pedir|"
    r"ohne\s+(nach)?zu?fragen)\b",
)
# Scanning, brute force, exploits, denial of service, other people's networks and devices.
NETWORK_ATTACK = _any(
    r"\b(nmap|masscan|zmap|hydra|medusa|ncrack|hashcat|john\s+the\s+ripper|aircrack(-ng)?|"
    r"airodump(-ng)?|aireplay(-ng)?|reaver|wifite|bettercap|ettercap|arpspoof|mimikatz|"
    r"metasploit|msfconsole|msfvenom|sqlmap|nikto|gobuster|dirbuster|dirb|ffuf|wfuzz|burp|"
    r"hping3?|slowloris|loic|hoic|crackmapexec|netexec|impacket|bloodhound|evil-winrm|"
    r"eternalblue|shodan|censys|searchsploit|exploit-?db|wpscan|enum4linux|kerbrute|rubeus|"
    r"cobalt\s+strike|netcat|ncat|socat|nc|tcpdump|wireshark|tshark|responder\.py)\b",
    r"\b(scan\w*|ports?|subnets?|network\s+range|ip\s+range|lan|wlan|wi-?fi|routers?|arp|syn|"
    r"packets?|ddos|denial[\s-]of[\s-]service|deauth\w*|brute\w*|wordlists?|rockyou|"
    r"dictionary\s+attack|password\s+spray\w*|credential\s+stuffing|crack\w*|exploit\w*|"
    r"payloads?|shellcode|cve(-\d+)*|zero-?day|0-?day|botnets?|sniff\w*|intercept\w*|mitm|"
    r"man[\s-]in[\s-]the[\s-]middle|spoof\w*|poison\w*|backdoors?|rootkits?|keyloggers?|"
    r"ransomware|malware|trojans?|privilege\s+escalation|pentest\w*|hijack\w*|take\s+over|"
    r"break\s+into|knock\w*\s+(\w+\s+){0,3}off|admin/admin|log(ging)?\s+in(to)?|"
    r"sign(ing)?\s+in(to)?|logins?|until\s+(one|it)\s+works|neighbou?rs?|other\s+people|"
    r"networks?|web\s?sites?|web\s?shops?|online\s+shops?|traffic|requests|offline|"
    r"unreachable|overwhelm\w*|take\w*\s+(\w+\s+){0,3}down|browsing|bandwidth|hotspots?|"
    r"social\s+media|until\s+(you|we|it)\s+(are|is|get|gets)\s+in|stop\w*\s+(answering|working|"
    r"responding)|someone\s+else'?s|(rival|competitor|ex|boss|colleague|coworker|stranger)'?s|"
    r"(my|the\s+owner'?s|his|her|their)\s+(ex|rival|competitor|boss))\b",
    r"\b(sitios?\s+web|sitio|tienda\s+en\s+linea|trafico|deje\s+de\s+funcionar|competidor\w*|"
    r"site|sites|trafic|tomber|concurrent\w*|webseite\w*|website\w*|anfragen|lahm\w*|"
    r"konkurrenz|verkehr|trafego|derrub\w*|concorrente\w*|loja\s+online)\b",
    r"\b(default\s+(logins?|passwords?|credentials)|pin\s+(codes?|numbers?|combinations?)|"
    r"(every|all|possible)\s+(\d+\s+)?(\w+\s+)?combinations|"
    r"guess\w*\s+(\w+\s+){0,4}(logins?|passwords?|pins?|codes?|passphrases?|accounts?))\b",
    r"\b(escane\w*|puertos?|red\s+(local|del|de\s+la)|fuerza\s+bruta|atac\w*|ataque\w*|"
    r"vulnerabilidad\w*|explot\w*|vecino\w*)\b",
    r"\b(balay\w*|scann\w*|reseau\w*|force\s+brute|attaqu\w*|pirat\w*|vulnerabilite\w*|"
    r"voisin\w*)\b",
    r"\b(netz\w*|\w*netz|nachbar\w*|angr(iff|eif)\w*|hack\w*|knack\w*|schwachstelle\w*|"
    r"ausnutz\w*|zugange|rate\s+die)\b",
    r"\b(varr(a|er|e)\w*|rede|redes|portas|forca\s+bruta|invad\w*|vulnerabilidade\w*|"
    r"vizinh\w*)\b",
)
# Credential and key stores by product, folder or kind; and where other logins live.
CREDENTIAL_STORES = _any(
    r"\b(gnupg|gpg|pgp|keepass(xc)?|kdbx|1password|bitwarden|lastpass|dashlane|enpass|"
    r"pass\s+store|password[\s-]store|password\s+managers?|vaults?|wallets?|keystores?|"
    r"keychains?|keyrings?|kube(config|rnetes)?|aws|gcloud|azure|github\s+cli|gh|"
    r"docker\s+config|npmrc|pypirc|netrc|ssh|pem|pfx|p12|jks|private\s+keys?|tokens?|"
    r"credentials?|autofill|saved\s+logins|login\s+data|browser\s+profiles?|cookies?|"
    r"(browser|browsing|shell|command|search|bash|zsh|mysql|psql)\s+histor(y|ies)|"
    r"gitconfig|credential\s+manager|secrets?|api\s+keys?|"
    r"hidden\s+(files?|folders?|directory|directories))\b",
    r"\b(ocult[ao]s?|versteckt\w*|cachee?s?)\b",
)
# Someone's secrets, named as theirs or as the ones in use ("the passphrase the owner typed",
# "the owner's recovery words"); "a strong passphrase" is an idea, not a secret.
OWNED_SECRETS = _any(
    r"\b(the|my|your|our|their|his|her|its|owner'?s|user'?s|saved|stored|current|existing|all|"
    r"every|any)\s+(\w+\s+){0,2}(passphrases?|passwords?|passcodes?|pins?|mnemonics?|"
    r"recovery\s+(words?|phrases?|codes?|keys?|emails?)|security\s+(questions?|answers?)|"
    r"one-time\s+(codes?|passwords?|pins?)|seed\s+(words?|phrases?)|(door|pin|access|alarm|"
    r"safe|security|verification|login|unlock|backup)\s+codes?|2fa|otp|totp|logins?|tokens?|"
    r"keys|credentials?|secrets?)\b",
)
# Telling it to others: whoever asks, anyone in the group, out loud.
DISCLOSURE = _any(
    r"\b((whoever|anyone|anybody|everyone|everybody)\s+(who\s+)?(asks?|wants?|requests?|"
    r"in\s+the\s+(group|chat|channel|room))|(to|with)\s+(whoever|anyone|anybody|everyone|"
    r"everybody|strangers|the\s+(group|chat|channel))|in\s+the\s+(group|chat|channel)|aloud|"
    r"out\s+loud)\b",
    r"\b(a\s+quien\s+(lo\s+)?pida|a\s+cualquiera|en\s+voz\s+alta)\b",
    r"\b(a\s+quiconque|a\s+qui\s+le\s+demande|a\s+voix\s+haute)\b",
    r"\b(jedem,?\s+der\s+(fragt|will|danach\s+fragt)|wer\s+(auch\s+)?(immer\s+)?fragt|"
    r"an\s+alle|laut\s+vor)\b",
    r"\b(a\s+quem\s+pedir|a\s+qualquer\s+(um|pessoa)|em\s+voz\s+alta)\b",
)
# Starting by itself: at login or boot, as a service, on a schedule the system keeps.
PERSISTENCE = _any(
    r"\b(at\s+(every\s+)?(login|logon|boot|startup)|on\s+(login|boot|startup)|autostart\w*|"
    r"startup\s+(folder|items?|programs?)|login\s+items?|launch\s?(agents?|daemons?)|"
    r"scheduled\s+tasks?|cron(tab|job|jobs)?|daemons?|systemd|init\.d|rc\.local|run\s+keys?|"
    r"background\s+services?)\b",
)
# Symbols spelled out as words, so that a command is written without them.
SPELLED_SYMBOLS = _any(
    r"\b(tilde|slash|backslash|pipe\s+(it|to|into)|asterisk|ampersand|semicolon|"
    r"dollar\s+sign|dot\s+(ssh|aws|config|env|gnupg|kube|bashrc|profile))\b",
)
