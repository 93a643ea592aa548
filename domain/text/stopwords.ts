// Common English function words and filler verbs that carry no topic of their own.
export const STOPWORDS: ReadonlySet<string> = new Set(
  `a about above after again against all also am an and any are as at be because been before being below between both
  but by can cannot could did do does doing down during each either few for from further get gets got had has have having
  he her here hers herself him himself his how i if in into is it its itself just let like make makes me might more most
  must my myself need needs no nor not now of off on once only or other our ours ourselves out over own per please same
  shall she should so some such than that the their theirs them themselves then there these they this those through to
  too under until up upon us use used using very want wants was we were what when where whether which while who whom why
  will with within without would you your yours yourself yourselves able across via vs versus etc one two three new next
  way ways thing things lot lots really help helps give take going goes want try trying sure whatever well much many
  i'm we're it's don't can't won't`
    .split(/\s+/)
    .filter(Boolean),
);

/** Verbs that frame a task rather than name its subject ("understand why…", "we suspect…"). */
export const WEAK_VERBS: ReadonlySet<string> = new Set(
  `understand understanding explain find figure learn explore investigate research study analyze analyse assess
  evaluate determine decide choose pick select consider compare review map matter matters worry worries worried
  suspect think believe know expect seem seems increase increased increases decrease decreased decreases drop dropped
  rise rose grow grew improve improved reduce reduced ensure start started stop stopped keep kept ship need needed
  should go went come came put set run ran see saw look looks looked become became write create build make
  prepare draft publish update migrate retire collect deliver launch fix add remove move organize deploy implement`
    .split(/\s+/)
    .filter(Boolean),
);
