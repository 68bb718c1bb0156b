"""The planted-bias world's own word lists (people, places, films, sentiment, identities).

Every word here was chosen by the project for the synthetic world (docs/architecture.md,
"The embedded default"); none is copied from the papers' resources. The lists are shaped like the
resources BiasFinder's three instances work with (BiasFinder §4–5): first names by gender,
gender nouns in male/female pairs, occupations with their indefinite article, and countries
of origin with a demonym (26 or more, like BiasFinder's 26 countries). The comment corpus
uses the identity words, one entry per identity column of Civil Comments.
"""

from __future__ import annotations

GENDERS = ("female", "male")

#: first names by gender; each one is clearly of one gender. "Ann"/"Annabel",
#: "Dan"/"Daniel" and "Leo"/"Leonard" contain one another on purpose (substring matching).
FIRST_NAMES: dict[str, tuple[str, ...]] = {
    "female": (
        "Ann", "Annabel", "Maria", "Sofia", "Claire", "Helen", "Grace", "Laura", "Emma",
        "Julia", "Nora", "Ruth", "Alice", "Irene", "Lucy", "Martha", "Rosa", "Vera",
        "Ingrid", "Amara", "Ngozi", "Priya", "Leila", "Fatima", "Camille", "Elena",
        "Greta", "Hannah", "Olga", "Agnes", "Beatrice", "Clara", "Diana", "Eva", "Frances",
        "Gloria", "Isabel", "Joan", "Linda", "Monica", "Naomi", "Paula", "Susan", "Teresa",
        "Ursula", "Wendy", "Yolanda", "Zara",
    ),
    "male": (
        "Dan", "Daniel", "Leo", "Leonard", "Tom", "Peter", "James", "Robert", "Michael",
        "David", "Samuel", "Victor", "Hugo", "Oscar", "Felix", "Arthur", "Henry", "George",
        "Frank", "Walter", "Kofi", "Emeka", "Ravi", "Omar", "Hiroshi", "Lars", "Pablo",
        "Marco", "Ivan", "Anton", "Bruno", "Carl", "Edward", "Gerald", "Howard", "Isaac",
        "Jack", "Kenneth", "Lewis", "Martin", "Nathan", "Patrick", "Raymond", "Simon",
        "Thomas", "Vincent", "William", "Harold",
    ),
}

#: surnames, none of them a common English word, colour or gender word ("Hall" is inside
#: "Halloran" on purpose)
SURNAMES: tuple[str, ...] = (
    "Lopez", "Becker", "Okafor", "Dahl", "Moreau", "Tanaka", "Kowalski", "Haddad", "Fischer",
    "Novak", "Rossi", "Silva", "Jensen", "Murphy", "Walsh", "Brennan", "Hughes", "Carter",
    "Holloway", "Hall", "Halloran", "Mensah", "Adeyemi", "Nakamura", "Petrov", "Garcia",
    "Duval", "Lindqvist", "Costa", "Ferreira", "Horvat", "Kaplan", "Bauer", "Vogel", "Sato",
    "Chen", "Nguyen", "Sharma", "Gupta", "Rahman", "Demir", "Yilmaz", "Aziz", "Mwangi",
    "Otieno", "Banda", "Quispe", "Morales", "Ortega", "Navarro", "Castillo", "Reyes",
    "Romero", "Sutherland", "Ellison", "Fletcher", "Gallagher", "Keane", "Lowry", "Nolan",
)

#: pronouns by case (BiasFinder §4: spp, opp, pp, rp; plus the independent possessive)
PRONOUNS: dict[str, dict[str, str]] = {
    "female": {"subj": "she", "obj": "her", "det": "her", "poss": "hers", "refl": "herself"},
    "male": {"subj": "he", "obj": "him", "det": "his", "poss": "his", "refl": "himself"},
}

#: gender nouns as (male, female) pairs
GENDER_NOUNS: tuple[tuple[str, str], ...] = (
    ("man", "woman"), ("guy", "gal"), ("boy", "girl"), ("father", "mother"),
    ("brother", "sister"), ("son", "daughter"), ("husband", "wife"), ("uncle", "aunt"),
    ("dad", "mom"), ("gentleman", "lady"), ("grandfather", "grandmother"),
)
GENDER_NOUN_DETERMINERS = ("the", "that", "this")
GENDER_NOUN_ADJECTIVES = ("", "", "young", "quiet", "stubborn", "grieving")

#: gender-neutral occupations (nouns; the article comes from :func:`indefinite`)
OCCUPATIONS: tuple[str, ...] = (
    "nurse", "engineer", "accountant", "architect", "baker", "carpenter", "chef", "dentist",
    "economist", "electrician", "farmer", "firefighter", "journalist", "lawyer", "librarian",
    "mechanic", "pharmacist", "photographer", "pilot", "plumber", "professor", "scientist",
    "surgeon", "teacher", "translator", "veterinarian", "editor", "optician", "astronomer",
    "inspector",
)
OCCUPATION_ADJECTIVES: tuple[str, ...] = (
    "brilliant", "honest", "gifted", "weary", "ambitious", "quiet", "ageing", "stubborn",
    "lonely", "retired", "talented", "overworked", "idealistic", "small-town", "exhausted",
)

#: countries of origin and their demonyms
COUNTRIES: dict[str, str] = {
    "Nigeria": "Nigerian", "Norway": "Norwegian", "Brazil": "Brazilian", "Japan": "Japanese",
    "India": "Indian", "Mexico": "Mexican", "Germany": "German", "France": "French",
    "Italy": "Italian", "Spain": "Spanish", "Canada": "Canadian", "Australia": "Australian",
    "Egypt": "Egyptian", "Kenya": "Kenyan", "Ghana": "Ghanaian", "Turkey": "Turkish",
    "Russia": "Russian", "China": "Chinese", "Vietnam": "Vietnamese",
    "Indonesia": "Indonesian", "Iran": "Iranian", "Poland": "Polish", "Sweden": "Swedish",
    "Argentina": "Argentine", "Chile": "Chilean", "Peru": "Peruvian", "Ireland": "Irish",
    "Greece": "Greek", "Portugal": "Portuguese", "Morocco": "Moroccan",
    "Ethiopia": "Ethiopian", "Pakistan": "Pakistani", "Ukraine": "Ukrainian",
    "Denmark": "Danish", "Finland": "Finnish", "Hungary": "Hungarian",
    "Colombia": "Colombian", "Senegal": "Senegalese", "Thailand": "Thai",
    "Iceland": "Icelandic",
}

# -- films ----------------------------------------------------------------------------------

#: invented film titles; one has an HTML entity and one a non-ASCII letter, as raw IMDB has
FILM_TITLES: tuple[str, ...] = (
    "Harbour Lights", "The Long Thaw", "Salt &amp; Iron", "Northern Static",
    "A Quiet Ledger", "Paper Moons", "The Glass Orchard", "Midnight Tariff", "Copper Sky",
    "The Last Ferry", "Small Hours", "Cinder Road", "The Winter Accord", "Seven Lanterns",
    "Café Meridian", "The Salt Marsh", "Borrowed Light", "Tin Crown", "The Eastern Gate",
    "Low Tide", "Second Harvest", "The Violet Hour", "Iron Meadow", "The Lantern Keeper",
)
GENRES: tuple[str, ...] = (
    "thriller", "drama", "comedy", "western", "romance", "war film", "mystery", "musical",
    "period piece", "horror film", "heist movie", "road movie", "sports drama",
    "family drama", "satire", "coming-of-age story", "courtroom drama", "ensemble piece",
)
FILM_ASPECTS: tuple[str, ...] = (
    "the script", "the score", "the cinematography", "the editing", "the pacing",
    "the dialogue", "the ending", "the opening act", "the supporting cast",
    "the camera work", "the set design", "the soundtrack", "the lighting", "the costumes",
)
#: relations of a second person to the protagonist (gender-neutral, no occupation words)
RELATIONS: tuple[str, ...] = (
    "rival", "neighbour", "business partner", "oldest friend", "boss", "confidant",
    "former partner", "flatmate", "mentor", "colleague", "childhood friend", "sparring partner",
)

# -- sentiment ------------------------------------------------------------------------------

POSITIVE_ADJECTIVES: tuple[str, ...] = (
    "wonderful", "superb", "gripping", "moving", "luminous", "sharp", "heartfelt", "assured",
    "beautiful", "riveting", "delightful", "terrific", "excellent", "memorable", "touching",
    "clever", "stunning", "marvellous", "tender", "electric",
)
NEGATIVE_ADJECTIVES: tuple[str, ...] = (
    "dull", "clumsy", "tedious", "lifeless", "flat", "muddled", "shallow", "forgettable",
    "bland", "awkward", "wooden", "lazy", "boring", "messy", "pointless", "grating",
    "tiresome", "dreadful", "stilted", "hollow",
)
POSITIVE_ADVERBS: tuple[str, ...] = (
    "beautifully", "brilliantly", "effortlessly", "convincingly", "gracefully", "precisely",
)
NEGATIVE_ADVERBS: tuple[str, ...] = (
    "awkwardly", "woodenly", "lazily", "half-heartedly", "clumsily", "mechanically",
)
POSITIVE_RATINGS: tuple[str, ...] = ("7/10", "8/10", "9/10", "10/10")
NEGATIVE_RATINGS: tuple[str, ...] = ("1/10", "2/10", "3/10", "4/10")

# -- identities (Civil Comments) ------------------------------------------------------------

#: the 24 identity columns of the Kaggle ``all_data.csv``, in file order
KAGGLE_IDENTITY_COLUMNS: tuple[str, ...] = (
    "male", "female", "transgender", "other_gender",
    "heterosexual", "homosexual_gay_or_lesbian", "bisexual", "other_sexual_orientation",
    "christian", "jewish", "muslim", "hindu", "buddhist", "atheist", "other_religion",
    "black", "white", "asian", "latino", "other_race_or_ethnicity",
    "physical_disability", "intellectual_or_learning_disability",
    "psychiatric_or_mental_illness", "other_disability",
)

#: words that name each identity group in a comment: ``plural`` noun phrases ("Muslims"),
#: ``a`` indefinite singulars ("a Muslim"), ``the`` definite singulars ("that Muslim family",
#: "my wife") and ``adjective`` forms used before a plural noun ("Muslim voters"). The
#: "other_*" columns have no words: a comment cannot be written about them.
IDENTITY_WORDS: dict[str, dict[str, tuple[str, ...]]] = {
    "male": {
        "plural": ("men", "guys", "fathers", "husbands"),
        "a": ("a man", "a father", "a guy"),
        "the": ("that man", "this guy", "my husband", "my father"),
        "adjective": ("male",),
    },
    "female": {
        "plural": ("women", "girls", "mothers", "wives"),
        "a": ("a woman", "a mother"),
        "the": ("that woman", "this girl", "my wife", "my mother"),
        "adjective": ("female",),
    },
    "transgender": {
        "plural": ("transgender people", "trans people"),
        "a": ("a transgender person",),
        "the": ("my transgender neighbour",),
        "adjective": ("transgender", "trans"),
    },
    "heterosexual": {
        "plural": ("straight people", "heterosexuals"),
        "a": ("a straight person",),
        "the": ("that straight couple",),
        "adjective": ("straight",),
    },
    "homosexual_gay_or_lesbian": {
        "plural": ("gay people", "lesbians", "gays and lesbians"),
        "a": ("a gay person", "a lesbian"),
        "the": ("that gay couple", "my lesbian neighbour"),
        "adjective": ("gay", "lesbian"),
    },
    "bisexual": {
        "plural": ("bisexual people", "bisexuals"),
        "a": ("a bisexual person",),
        "the": ("my bisexual coworker",),
        "adjective": ("bisexual",),
    },
    "christian": {
        "plural": ("Christians", "christians", "Christian people", "church-going Christians"),
        "a": ("a Christian", "a devout Christian"),
        "the": ("that Christian family", "my Christian coworker", "the Christian pastor"),
        "adjective": ("Christian",),
    },
    "jewish": {
        "plural": ("Jews", "Jewish people", "jewish people", "Jewish families"),
        "a": ("a Jew", "a Jewish person"),
        "the": ("that Jewish family", "my Jewish neighbour", "the Jewish owner"),
        "adjective": ("Jewish",),
    },
    "muslim": {
        "plural": ("Muslims", "muslims", "Muslim people", "Muslim families"),
        "a": ("a Muslim", "a devout Muslim"),
        "the": ("that Muslim family", "my Muslim neighbour", "the Muslim shop owner"),
        "adjective": ("Muslim", "muslim"),
    },
    "hindu": {
        "plural": ("Hindus", "Hindu families"),
        "a": ("a Hindu",),
        "the": ("my Hindu neighbour",),
        "adjective": ("Hindu",),
    },
    "buddhist": {
        "plural": ("Buddhists",),
        "a": ("a Buddhist",),
        "the": ("the Buddhist teacher",),
        "adjective": ("Buddhist",),
    },
    "atheist": {
        "plural": ("atheists",),
        "a": ("an atheist",),
        "the": ("that atheist blogger",),
        "adjective": ("atheist",),
    },
    "black": {
        "plural": ("Black people", "black people", "Black Americans", "blacks",
                   "the Black community"),
        "a": ("a Black person", "a black kid"),
        "the": ("that Black family", "my black coworker", "the Black pastor"),
        "adjective": ("Black", "black"),
    },
    "white": {
        "plural": ("white people", "White people", "White Americans", "whites",
                   "the white community"),
        "a": ("a white person", "a white kid"),
        "the": ("that white family", "my white coworker", "the white pastor"),
        "adjective": ("white", "White"),
    },
    "asian": {
        "plural": ("Asian people", "Asians", "Asian Americans", "asian people",
                   "the Asian community"),
        "a": ("an Asian person", "an Asian kid"),
        "the": ("that Asian family", "my asian coworker", "the Asian shop owner"),
        "adjective": ("Asian", "asian"),
    },
    "latino": {
        "plural": ("Latinos", "Latino families", "the Latino community"),
        "a": ("a Latino", "a Latino kid"),
        "the": ("that Latino family",),
        "adjective": ("Latino",),
    },
    "physical_disability": {
        "plural": ("disabled people", "people in wheelchairs"),
        "a": ("a disabled person", "someone in a wheelchair"),
        "the": ("my disabled neighbour",),
        "adjective": ("disabled",),
    },
    "intellectual_or_learning_disability": {
        "plural": ("people with learning disabilities",),
        "a": ("someone with a learning disability",),
        "the": ("the student with a learning disability",),
        "adjective": ("learning-disabled",),
    },
    "psychiatric_or_mental_illness": {
        "plural": ("people with mental illness", "the mentally ill"),
        "a": ("someone with a mental illness",),
        "the": ("my neighbour with schizophrenia",),
        "adjective": ("mentally ill",),
    },
}

#: mild insults for toxic comments (no slurs, no threats)
INSULTS: tuple[str, ...] = (
    "idiots", "clowns", "morons", "fools", "hypocrites", "losers", "crybabies", "dimwits",
)
INSULT_ADJECTIVES: tuple[str, ...] = (
    "stupid", "pathetic", "clueless", "ignorant", "brainless", "dumb", "spineless",
)

_AN_EXCEPTIONS = frozenset({"honest", "hour", "honourable", "heir"})
_A_EXCEPTIONS = frozenset({"one", "unique", "useful", "usual", "university", "european",
                           "ukrainian", "uruguayan", "utopian"})


def indefinite(phrase: str) -> str:
    """``phrase`` with its indefinite article: "a nurse", "an engineer", "an honest ..."."""
    first = phrase.split()[0].lower()
    vowel = first[0] in "aeiou" and first not in _A_EXCEPTIONS
    return f"{'an' if vowel or first in _AN_EXCEPTIONS else 'a'} {phrase}"
