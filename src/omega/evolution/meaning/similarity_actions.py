"""The actions a gap names (send, read, book, pay...), each in English, Spanish, French and German,
for similarity.py. Written folded (lower case, no accents, `ß` as `ss`).

A form is a whole word, or a stem ending in `*` that matches any word starting with it (the
longest known stem wins, so `photocop*` is not `photo*`). A word is looked up as it is, then as
its Snowball stem in the text's language (`reservations` -> `reserv`), so an exact form only
needs the stem or base word; stems with `*` are for families the stemmers do not join
(`envoy*`, `envoi*`). Keep a stem long enough that it names one thing: `tele*` would join
teleport and telepathy.
"""

from __future__ import annotations

ACTIONS: dict[str, str] = {
    "send": "ship ships shipped send sent sending outgoing expedier expedie enviar envia envian "
    "envie envio envien enviando "
    "enviado enviad* envoy* envoi envoie envoient mandar manda mande schick* senden sende sendet "
    "gesendet versend* verschick* forward* reenvi* weiterleit*",
    "receive": "receiv* recib* recevoir recoi* recu recus empfang* erhalt* bekomm*",
    "read": "read reads reader browse browsing leer lee leo leen leyendo leido lectura lire lis "
    "lit lisent lecture lesen lese liest gelesen extract* extrae* extraer extraire auslesen "
    "open opens opening abrir abre ouvrir ouvre oeffn* offn* parse parsing",
    "analyze": "analy* analiz* auswert*",
    "write": "write writes writing written wrote escribir escribe redactar redacta rediger "
    "redige ecrire ecrit* schreib* verfass* draft* compose composing",
    "create": "setzen setze setzt creat* crear crea creo creen creando creado creer cree creent "
    "erstell* anleg* add adds adding anadir anade agregar agrega ajout* hinzufug* hinzufueg* set "
    "sets regler regle",
    "save": "save saves saved saving store stores stored storing guardar guarda speichern "
    "speichert gespeichert abspeichern",
    "delete": "delet* remov* borrar borra elimin* supprim* efface* losch* loesch* entfern*",
    "edit": "edit* modif* bearbeit* retouch* retoc* change changes changing changer cambiar "
    "andern aendern adjust* ajust* anpass* regul*",
    "search": "search* buscar busca busque busqueda* cherch* recherch* such* find finds "
    "finding found encontrar encuentr* trouver trouve finden findet locat* locali* ubicar "
    "orten ortung geoloc*",
    "download": "download* descarg* telecharg* herunterlad* runterlad*",
    "upload": "upload* subir sube hochlad* televers*",
    "play": "play plays playing playback wiedergeb* reproduc* jouer joue abspiel* spielen spielt "
    "stream* "
    "listen* escuch* ecout* anhor* horen hoeren watch watching regarder regarde anseh* "
    "anschau*",
    "generate": "generat* generar genera generer genere generier* erzeug*",
    "translate": "translat* traduc* tradu* ubersetz* uebersetz*",
    "transcribe": "transcri* transkri* verschrift*",
    "print": "print* imprim* druck*",
    "scan": "scan* escane* numeris* einscann*",
    "record": "record recording grabar graba grabacion* enregistr* aufnehm* aufnahm* aufzeichn*",
    "compress": "compress* comprim* komprim*",
    "unpack": "unzip* decompress* descomprim* decomprim* dezipp* entpack* entzipp*",
    "merge": "merg* combin* fusion* zusammenfug* zusammenfueg* vereinig*",
    "split": "split* dividir divide* diviser decoup* aufteil* trenn*",
    "share": "share shared shares sharing compart* partag* teilen teile teilt geteilt",
    "convert": "umzuwandel* umwandel* convert* conversion* convertir konvert* umrechn* umwandl* "
    "transform*",
    "track": "track* follow follows following followed rastre* seguimiento segui* suivi suivre "
    "verfolg* monitor* vigil* "
    "surveill* uberwach* ueberwach* observ*",
    "summarize": "summar* resum* zusammenfass* synthes*",
    "sign": "sign signing signed firmar firma signer unterschreib* unterzeichn* signier*",
    "reply": "reply* replie* respond* answer* contestar contesta repond* antwort* beantwort*",
    "book": "book books booking bookings reserv* buchen bucht gebucht buchung*",
    "buy": "buy buys buying bought purchas* order ordered ordering orders comprar compra "
    "compras compre compro pedir pide pedido* encarg* achet* achat* commande* kaufen kauft "
    "gekauft einkauf* bestell* shop shops shopping",
    "pay": "pay pays paying paid payment* pagar paga pago pagos payer paie paye paiement* "
    "bezahl* zahlen zahlt zahlung*",
    "transfer": "transfer* transferencia* uberweis* ueberweis* virement* virer",
    "cancel": "cancel* anular anula anulacion* annul* storn* kundig* absag*",
    "schedule": "schedul* planif* plann* planen einplan* programar agendar",
    "call": "anzuruf* dial dials dialing call calls calling called llamar llama llamada* appel* "
    "appeler telephoner anruf* telefonat* telefonier*",
    "publish": "post posts posting posted publish* publica* publicar publie* publier poster "
    "veroffentlich* veroeffentlich* posten",
    "export": "export* exportar exporter exportier*",
    "import": "import* importar importer importier*",
    "sync": "sync* sincroniz* synchroni* abgleich*",
    "backup": "backup* respald* sauvegard* sichern sicherung*",
    "restore": "restor* restaur* wiederherstell*",
    "install": "install* instal*",
    "update": "updat* actualiz* aktualis* upgrad*",
    "run": "run runs running execut* ejecut* exec* lancer lance ausfuhr* ausfuehr* start starts "
    "starting iniciar inicia arrancar demarr* starten startet launch*",
    "sort": "sort sorts sorting organiz* organis* ordenar ordena trier sortier*",
    "move": "move moves moving mover mueve deplac* verschieb*",
    "rename": "renam* renombr* renomm* umbenenn*",
    "copy": "copy copies copying copi* copier kopier* duplic* photocop* fotocop* fotokop*",
    "encrypt": "encrypt* cifrar cifra chiffr* verschlussel* verschluessel*",
    "decrypt": "decrypt* descifr* dechiffr* entschlussel* entschluessel*",
    "login": "login logon signin authent* autentic* anmeld* einlogg* connexion",
    "logout": "logout logoff signout abmeld* auslogg* deconnex*",
    "connect": "connect connects connecting conectar conecta conexion connecter verbind*",
    "control": "control* turn turning turnon switch* toggl* encend* apag* allum* eteindr* "
    "etein* einschalt* ausschalt* anschalt* abschalt* schalt* bedien*",
    "dim": "dim dimming dimm* atenu* tamis*",
    "configure": "configur* konfigur* einstell* einricht* setup settings setting",
    "notify": "notif* alert* benachrichtig* warn*",
    "calculate": "calcul* berechn* rechnen compute computing",
    "measure": "measur* medir mide mesur* messen misst gemessen",
    "compare": "compar* vergleich*",
    "count": "count counts counting contar compter zaehl*",
    "invite": "invit* einlad*",
    "subscribe": "subscri* suscri* abonn* abonier*",
    "unsubscribe": "unfollow* unsubscri* desuscri* desabon* desinscri* abbestell*",
    "verify": "verif* valid* pruf* pruef* uberpruf* ueberpruef*",
    "format": "format* formate* formatier*",
    "resize": "resiz* redimension* rescal* skalier* crop* recort* recadr* zuschneid*",
    "fill": "fill* rellen* remplir rempli remplis ausfull* ausfuell*",
    "recognize": "recogni* reconoc* reconnai* reconna* erkenn* identif* detect* detecc*",
    "deploy": "deploy* despleg* desplieg* deploi* deployer bereitstell* ausroll*",
    "build": "build builds building compil* kompilier*",
    "test": "test tests testing probar prueba* tester testen",
    "debug": "debug* depur* debogu* debugg*",
    "filter": "filter* filtr* block blocks blocking bloque* bloquer blockier* sperr*",
    "unblock": "unblock* desbloque* debloqu* entsperr* unlock* deverrouill* aufschliess*",
    "accept": "accept* acept* annehm* akzeptier* zusag*",
    "decline": "declin* rechaz* refus* ablehn*",
    "solve": "solv* resolv* resoudr* resolu* losen loesen",
    "draw": "draw draws drawing dibuj* dessin* zeichn*",
    "describe": "describ* descri* beschreib*",
    "clone": "clone clones cloning clonar clonage cloner klonen klont",
    "charge": "charge charges charging recharg* aufladen ladt",
    "vote": "vote votes voting votar voter abstimm*",
    "water": "water watering regar riego arroser giessen giesst",
    "join": "join joins joining joined unirse unirme rejoindre beitret* teilnehm* particip*",
    "return": "return returns returning returned refund* devolver devolucion* devolv* "
    "retourn* renvoyer remboursement* rembours* ruckgab* zuruckgeb* zuruecksend* rucksend* "
    "erstatt* restituire restituzion* rimbors* reembols* terugstur* retourner*",
    "stop": "stop stops stopping parar detener arreter anhalten stopp* cease ceas* quit "
    "quitting aufhor* aufhoer* ophoud*",
}
# Verbs that say almost nothing of the gap: they weigh as the generic "get", not as actions.
GENERIC_ACTIONS: dict[str, str] = {
    "get": "see sees seeing voir vois voit sehen sieht give gives giving dar geben donner "
    "donne dare geven get gets getting acces* acced* zugriff* zugreif* check checks checking "
    "consult* abruf* abfrag* fetch* obtain* obten* obtien* look looks lookup retriev* recuper* "
    "query queries show shows showing display* view* mostrar muestra affich* anzeig* zeig* manag* "
    "gestion* gerer handl* verwalt* provid* proporcion* fournir tell decir dire sagen",
    # "make a call", "take a photo": the verb names no action of its own
    "make": "make makes making made hacer hace faire fait machen macht poner pon stellen "
    "tatigen taetigen passer take takes taking took tomar sacar prendre prend nehmen",
}
